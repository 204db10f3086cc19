import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const pkg = JSON.parse(read('package.json')) as { exports: Record<string, Record<string, string>>; files: string[] };
const tsconfig = JSON.parse(read('tsconfig.json')) as { compilerOptions: { paths: Record<string, string[]> } };
const vitestConfig = read('test/vitest.config.ts');

/** Every `src/<name>.ts` is an entry point: `agentchart` for index.ts, `agentchart/<name>` for the others. */
const entries = readdirSync(join(ROOT, 'src'))
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.slice(0, -'.ts'.length))
  .map((name) => ({
    name,
    specifier: name === 'index' ? 'agentchart' : `agentchart/${name}`,
    subpath: name === 'index' ? '.' : `./${name}`,
  }));

describe('entry points', () => {
  it.each(entries)(
    '$specifier has an exports entry loadable by import and require, a tsconfig path and a vitest alias',
    ({ name, specifier, subpath }) => {
      expect(pkg.exports[subpath]).toEqual({
        types: `./dist/src/${name}.d.ts`,
        import: `./dist/src/${name}.js`,
        default: `./dist/src/${name}.js`,
      });
      expect(tsconfig.compilerOptions.paths[specifier]).toEqual([`./src/${name}.ts`]);
      // On one line, or on two where the specifier is too long for one (Prettier's 120 columns).
      const find = `find: /^${specifier.replace('/', '\\/')}$/,`;
      const replacement = `replacement: fileURLToPath(new URL('../src/${name}.ts'`;
      expect(vitestConfig.replace(/,\s+replacement: /g, ', replacement: ')).toContain(`${find} ${replacement}`);
    },
  );

  it('the exports map has no entry without its source file', () => {
    expect(Object.keys(pkg.exports).sort()).toEqual(entries.map((entry) => entry.subpath).sort());
  });
});

describe('references', () => {
  /** Sources, tests and docs of the repository (git's list: what a clean clone has). */
  const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
  const texts = tracked.filter(
    (file) =>
      /^(src|test|machines|bench|visualizations|docs)\/.*\.(ts|md)$/.test(file) ||
      ['README.md', 'ARCHITECTURE.md'].includes(file),
  );

  /** Pages the README and docs/ link to that other branches are writing: a name leaves the list when its page lands. */
  const writtenElsewhere = new Set<string>([]);
  const exists = (path: string) => existsSync(join(ROOT, path)) || writtenElsewhere.has(path);

  it('name only Markdown files that are in the repository', () => {
    const cited = texts.flatMap((file) =>
      // A name right after a placeholder (`<workload>-compare.md`, `${name}.md`) is a pattern, not a file.
      [...read(file).matchAll(/(?<![\w/.\-<>{}$*])((?:[\w.-]+\/)*[\w-]+\.md)\b/g)]
        .map((match) => match[1] ?? '')
        .filter((path) => !exists(path) && !exists(join(dirname(file), path)))
        .map((path) => `${path} (in ${file})`),
    );
    expect(cited).toEqual([]);
  });

  it('ARCHITECTURE.md names only source files and directories that exist', () => {
    const named = [
      ...read('ARCHITECTURE.md').matchAll(/(?<![\w/.-])((?:src|machines|test|bench|visualizations)\/[\w./*|-]*)/g),
    ]
      .map((match) => (match[1] ?? '').replace(/[.]$/, ''))
      // `visualizations/*.mmd|svg`, `*-steps.ts`: patterns, not files.
      .filter((path) => !/[*|]/.test(path));
    expect(named.length).toBeGreaterThan(30);
    expect(named.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });

  it('cite no design document by section: the rule is said in the repository’s own words', () => {
    // Spelled so that this file does not match itself: the section sign, or the design document's name.
    const citation = /\u00a7|D[E]SIGN/;
    const citing = tracked
      .filter((file) => file !== 'package-lock.json')
      .map((file) => [file, read(file)] as const)
      // Images and other binary files say nothing.
      .filter(([, text]) => !text.includes('\u0000'))
      .flatMap(([file, text]) =>
        text
          .split('\n')
          .flatMap((line, index) => (citation.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
      );
    expect(citing).toEqual([]);
  });
});
