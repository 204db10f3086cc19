/** A code block of README.md marked `<!-- readme-example: NAME … -->`, run by the consumer tests. */
export interface ReadmeExample {
  name: string;
  code: string;
  /** What the example says it prints: the `// …` comment after each `console.log(…);`. */
  expectedLines: string[];
}

const MARKED_BLOCK = /<!-- readme-example: ([\w-]+)[^>]*-->\n```ts\n([\s\S]*?)\n```/g;
const PRINTED = /console\.log\(.*\);\s*\/\/\s*(.+)$/;

const OUTPUT_BLOCK = /<!-- readme-output: ([\w-]+)[^>]*-->\n```text\n([\s\S]*?)\n```/g;

/** The text blocks marked `<!-- readme-output: NAME -->`: what the example NAME prints, exactly. */
export function readmeOutputs(readme: string): Map<string, string> {
  return new Map([...readme.matchAll(OUTPUT_BLOCK)].map(([, name = '', text = '']) => [name, text]));
}

export function readmeExamples(readme: string): ReadmeExample[] {
  return [...readme.matchAll(MARKED_BLOCK)].map(([, name = '', code = '']) => ({
    name,
    code,
    expectedLines: code.split('\n').flatMap((line) => {
      const printed = PRINTED.exec(line)?.[1];
      return printed === undefined ? [] : [printed.trim()];
    }),
  }));
}

/**
 * The example as a CommonJS module's source: imports stay at the top (TypeScript turns them into
 * `require`), the rest runs in an async function since CommonJS has no top-level await.
 */
export function asCommonJs(code: string): string {
  const lines = code.split('\n');
  const imports = lines.filter((line) => line.startsWith('import '));
  const unfinished = imports.find((line) => !line.trimEnd().endsWith(';'));
  if (unfinished) throw new Error(`README examples keep each import on one line: ${unfinished}`);
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
