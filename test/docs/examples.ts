import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The code blocks of README.md and docs/*.md, as programs a test compiles and runs. Every ```ts block is
 * one; an HTML comment on the line just before its fence says more:
 *
 *   <!-- example: name=usage consumer -->   a name (default: its number on the page); `consumer`: also run
 *                                            from the packed tarball in fresh ESM and CommonJS apps
 *   <!-- example: continues -->              appended to the page's previous block: one program, so it can
 *                                            use what that block declared (an import seen before is dropped)
 *   <!-- example: compile-only -->           type-checked, not run (it needs a real provider key or server)
 *   <!-- example: file=setup.ts -->          a module of the page, not run itself: other blocks of the page
 *                                            import it (`import { model } from './setup.js'`)
 *   <!-- example: needs=postgres -->         run with DATABASE_URL set to a PostgreSQL the test starts
 *
 * A ```tsx block is a browser page's module (React): type-checked with `jsx: react-jsx`, never run.
 *
 * A program says what it prints with a comment after a `console.log(…);` (`console.log(x); // 42`), and
 * a ```text block marked `<!-- example-output: NAME -->` is printed by the program NAME, exactly.
 * Other code goes in blocks of another language (`sh`, `text`, `json`); `js`, `typescript` and the like
 * are refused so that no TypeScript escapes the tests.
 */

export interface DocBlock {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  name: string;
  code: string;
  consumer: boolean;
  continues: boolean;
  compileOnly: boolean;
  file: string | null;
  needs: string[];
  /** A ```tsx block (a page's module: compiled, not run). */
  tsx: boolean;
}

export interface DocProgram {
  page: string;
  line: number;
  name: string;
  /** A file name for it: page and name, safe anywhere. */
  id: string;
  code: string;
  /** What it says it prints: the `// …` comment after each `console.log(…);`. */
  expectedLines: string[];
  /** Exactly what it prints, from an `example-output` block (or null). */
  output: string | null;
  consumer: boolean;
  compileOnly: boolean;
  needs: string[];
  /** `.tsx` for a page's module. */
  extension: '.ts' | '.tsx';
}

export interface DocPage {
  page: string;
  programs: DocProgram[];
  /** Modules of the page (`file=`), by file name. */
  files: Map<string, string>;
}

const MARKER = /^<!-- example: (.+?) -->$/;
const OUTPUT_MARKER = /^<!-- example-output: ([\w-]+) -->$/;
const PRINTED = /console\.log\(.*\);\s*\/\/\s*(.+)$/;
/** Fences that would hold code the tests never see. */
const REFUSED_LANGUAGES = new Set(['js', 'javascript', 'mjs', 'cjs', 'jsx', 'typescript', 'mts', 'cts']);
const NEEDS = new Set(['postgres']);

/** README.md and every page of docs/ (not the generated API reference), as paths from the repository root. */
export function docPages(root: string): string[] {
  if (!existsSync(join(root, 'docs'))) return ['README.md'];
  const docs = readdirSync(join(root, 'docs'), { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => `docs/${entry.name}`)
    .sort();
  return ['README.md', ...docs];
}

export function readDocPage(root: string, page: string): DocPage {
  return docPageOf(page, readFileSync(join(root, page), 'utf8'));
}

export function docPageOf(page: string, markdown: string): DocPage {
  const { blocks, outputs } = blocksOf(page, markdown);
  const files = new Map<string, string>();
  const programs: DocProgram[] = [];
  for (const block of blocks) {
    if (block.file !== null) {
      files.set(block.file, block.code);
      continue;
    }
    const previous = programs.at(-1);
    if (block.continues) {
      if (!previous) throw new Error(`${page}:${block.line}: "continues" but no block before it on the page`);
      programs.pop();
      programs.push(joined(previous, block));
    } else {
      programs.push(programOf(block));
    }
  }
  for (const [name, text] of outputs) {
    const program = programs.find((candidate) => candidate.name === name);
    if (!program) throw new Error(`${page}: an example-output block names "${name}", which is no program of the page`);
    program.output = text;
  }
  return { page, programs, files };
}

function programOf(block: DocBlock): DocProgram {
  return {
    page: block.page,
    line: block.line,
    name: block.name,
    id: `${block.page.replace(/\.md$/, '').replace(/[^\w]+/g, '-')}--${block.name}`,
    code: block.code,
    expectedLines: printedLines(block.code),
    output: null,
    consumer: block.consumer,
    compileOnly: block.compileOnly || block.tsx,
    needs: block.needs,
    extension: block.tsx ? '.tsx' : '.ts',
  };
}

/** A block continuing a program: its code appended, imports already there left out. */
function joined(program: DocProgram, block: DocBlock): DocProgram {
  const seen = new Set(program.code.split('\n').filter((line) => line.startsWith('import ')));
  const added = block.code.split('\n').filter((line) => !seen.has(line));
  const code = `${program.code}\n\n${added.join('\n')}`;
  return {
    ...program,
    code,
    expectedLines: printedLines(code),
    consumer: program.consumer || block.consumer,
    compileOnly: program.compileOnly || block.compileOnly || block.tsx,
    needs: [...new Set([...program.needs, ...block.needs])],
    extension: block.tsx ? '.tsx' : program.extension,
  };
}

function printedLines(code: string): string[] {
  return code.split('\n').flatMap((line) => {
    const printed = PRINTED.exec(line)?.[1];
    return printed === undefined ? [] : [printed.trim()];
  });
}

function blocksOf(page: string, markdown: string): { blocks: DocBlock[]; outputs: Map<string, string> } {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  const outputs = new Map<string, string>();
  for (let at = 0; at < lines.length; at++) {
    const fence = /^(\s*)(`{3,})\s*([\w-]*)/.exec(lines[at] ?? '');
    if (!fence) continue;
    const [, indent = '', ticks = '```', language = ''] = fence;
    const end = lines.findIndex((line, index) => index > at && line.trim() === ticks);
    if (end < 0) throw new Error(`${page}:${at + 1}: a code block that never closes`);
    // A block inside a list item is indented: its code is not.
    const code = lines
      .slice(at + 1, end)
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join('\n');
    const before = at > 0 ? (lines[at - 1] ?? '').trim() : '';
    if (REFUSED_LANGUAGES.has(language))
      throw new Error(
        `${page}:${at + 1}: a \`\`\`${language} block; TypeScript examples are \`\`\`ts (run by the tests)`,
      );
    if (language === 'ts' || language === 'tsx') {
      blocks.push(blockOf(page, at + 1, code, before, blocks.length + 1, language === 'tsx'));
    } else if (MARKER.test(before))
      throw new Error(`${page}:${at}: an example marker before a ${language || 'plain'} block`);
    const output = OUTPUT_MARKER.exec(before);
    if (output) {
      if (language !== 'text') throw new Error(`${page}:${at}: example-output goes before a \`\`\`text block`);
      outputs.set(output[1] ?? '', code);
    }
    at = end;
  }
  return { blocks, outputs };
}

function blockOf(page: string, line: number, code: string, before: string, number: number, tsx: boolean): DocBlock {
  const block: DocBlock = {
    tsx,
    page,
    line,
    name: String(number),
    code,
    consumer: false,
    continues: false,
    compileOnly: false,
    file: null,
    needs: [],
  };
  const words = MARKER.exec(before)?.[1]?.split(/\s+/) ?? [];
  for (const word of words) {
    const [key, value] = word.split('=');
    if (key === 'name' && value && /^[\w-]+$/.test(value)) block.name = value;
    else if (key === 'file' && value && /^[\w-]+\.ts$/.test(value)) block.file = value;
    else if (key === 'needs' && value && NEEDS.has(value)) block.needs.push(value);
    else if (word === 'consumer') block.consumer = true;
    else if (word === 'continues') block.continues = true;
    else if (word === 'compile-only') block.compileOnly = true;
    else throw new Error(`${page}:${line - 1}: unknown word "${word}" in an example marker`);
  }
  return block;
}

/**
 * The example as a CommonJS module's source: imports stay at the top (TypeScript turns them into
 * `require`), the rest runs in an async function since CommonJS has no top-level await.
 */
export function asCommonJs(code: string): string {
  const lines = code.split('\n');
  const imports = lines.filter((line) => line.startsWith('import '));
  const unfinished = imports.find((line) => !line.trimEnd().endsWith(';'));
  if (unfinished) throw new Error(`examples run as CommonJS keep each import on one line: ${unfinished}`);
  const body = lines.filter((line) => !line.startsWith('import '));
  return [
    ...imports,
    '',
    'async function main(): Promise<void> {',
    ...body.map((line) => `  ${line}`),
    '}',
    '',
    'void main();',
    '',
  ].join('\n');
}

/** The page with the ```text block after `<!-- example-output: NAME -->` replaced by `text`. */
export function withOutput(markdown: string, name: string, text: string): string {
  const marker = `<!-- example-output: ${name} -->\n\`\`\`text\n`;
  const start = markdown.indexOf(marker);
  if (start < 0) throw new Error(`no example-output block named ${name}`);
  const end = markdown.indexOf('\n```', start + marker.length);
  return `${markdown.slice(0, start + marker.length)}${text}${markdown.slice(end)}`;
}
