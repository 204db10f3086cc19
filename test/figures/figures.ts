import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Figures in the docs (test counts, path counts, the mutation score) come from runs, never from a
 * hand: each sits between `<!-- figures:NAME -->` and `<!-- /figures:NAME -->` inside a line of a
 * Markdown file, and `npm run figures` (docs/tools/figures.ts) rewrites them from what it ran and read.
 * The cheap ones are also checked by the tests (test/figures/expect.ts). Whole generated blocks
 * (bench tables, error codes) are docs/tools/regions.ts's, which `npm run figures` runs too.
 */

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where the runs `npm run figures` starts leave their figures (AGENTCHART_FIGURES_DIR). */
export const FIGURES_DIR = join(ROOT, 'test/.build/figures');

/** Every figure `npm run figures` writes; a region of another name is a mistake. */
export const FIGURE_NAMES = [
  'paths-turn',
  'paths-master',
  'paths-tool-call',
  'tests',
  'hostile-tests',
  'interleavings',
  'crash-points',
  'mutation',
] as const;

const REGION = /<!-- figures:([\w-]+) -->([\s\S]*?)<!-- \/figures:\1 -->/g;

/** The tracked Markdown files: the pages a figure may appear on. */
export function pages(): string[] {
  return execFileSync('git', ['ls-files', '*.md'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
}

export function regionsOf(text: string): Array<{ name: string; content: string }> {
  return [...text.matchAll(REGION)].map((match) => ({ name: match[1] ?? '', content: match[2] ?? '' }));
}

/** `text` with every region named in `values` holding its value. */
export function withFigures(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(REGION, (whole, name: string) =>
    name in values ? `<!-- figures:${name} -->${values[name]}<!-- /figures:${name} -->` : whole,
  );
}

const count = (n: number) => n.toLocaleString('en-US');

/** How each figure is written; the data is what its run measured. */
export const render = {
  paths: (tally: PathTally) =>
    `${count(tally.paths)} paths (${count(tally.states)} states) in ${tally.configurations} configurations`,
  tests: (data: { tests: number; files: number }) => `${count(data.tests)} tests in ${count(data.files)} files`,
  count,
  percent: (fraction: number) => `${(fraction * 100).toFixed(1)}%`,
};

/** The paths and states a model-checking file explored over its configurations. */
export class PathTally {
  configurations = 0;
  paths = 0;
  states = 0;

  add(paths: number, states: number): void {
    this.configurations += 1;
    this.paths += paths;
    this.states += states;
  }
}

/** A figure recorded by a run `npm run figures` started, or null. */
export function recorded(name: string): string | null {
  const path = join(FIGURES_DIR, `${name}.txt`);
  return existsSync(path) ? readFileSync(path, 'utf8') : null;
}
