import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIGURES_DIR, pages, recorded, regionsOf, ROOT, withFigures } from '../../test/figures/figures.js';
import { MUTATION_REPORT, mutationFigure, suiteFigures, testFigures } from '../../test/figures/sources.js';
import { REGION_PAGES, withRegions } from './regions.js';

/**
 * `npm run figures` (before a landing): rewrites every figure of the tracked Markdown files from runs
 * on this commit. Always: the model checking of the three charts (about a minute), the counts the
 * test code fixes (interleavings, crash points), the mutation score when a report of
 * `npm run mutation` is here, and the generated blocks of docs/ (`npm run docs:regions`: bench
 * figures from bench/results.json, error codes). `-- --tests` also runs the whole suite for the test
 * counts.
 */
const withTests = process.argv.includes('--tests');
const VITEST = join(ROOT, 'node_modules/vitest/vitest.mjs');

function vitest(args: string[]): void {
  const ran = spawnSync(process.execPath, [VITEST, 'run', '--config', 'test/vitest.config.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, AGENTCHART_FIGURES_DIR: FIGURES_DIR },
    stdio: 'inherit',
  });
  if (ran.status !== 0) throw new Error(`figures: vitest ${args.join(' ')} failed; no page was changed`);
}

rmSync(FIGURES_DIR, { recursive: true, force: true });
mkdirSync(FIGURES_DIR, { recursive: true });
const values: Record<string, string> = { ...suiteFigures() };
const notes: string[] = [];

if (withTests) {
  const report = join(FIGURES_DIR, 'vitest.json');
  // The whole suite records the model checking's figures too.
  vitest(['--reporter=default', '--reporter=json', `--outputFile.json=${report}`]);
  Object.assign(values, testFigures(JSON.parse(readFileSync(report, 'utf8'))));
} else {
  vitest([
    'test/model-checking/turn.test.ts',
    'test/model-checking/master.test.ts',
    'test/model-checking/tool-call.test.ts',
  ]);
  notes.push('tests, hostile-tests: not refreshed (npm run figures -- --tests runs the whole suite for them)');
}
for (const machine of ['turn', 'master', 'tool-call']) {
  const text = recorded(`paths-${machine}`);
  if (text === null) throw new Error(`figures: the model checking of ${machine} recorded no paths`);
  values[`paths-${machine}`] = text;
}
const mutation = mutationFigure();
if (mutation) {
  values.mutation = mutation.text;
  notes.push(`mutation: from ${MUTATION_REPORT} of ${mutation.date.toISOString()} (npm run mutation refreshes it)`);
} else {
  notes.push(`mutation: not refreshed (no ${MUTATION_REPORT}: run npm run mutation first)`);
}

const unknown = new Set<string>();
for (const page of pages()) {
  const path = join(ROOT, page);
  if (!existsSync(path)) continue;
  const before = readFileSync(path, 'utf8');
  for (const region of regionsOf(before)) if (!(region.name in values)) unknown.add(region.name);
  const after = withFigures(before, values);
  if (after === before) continue;
  writeFileSync(path, after);
  const changed = regionsOf(before).filter((region, index) => regionsOf(after)[index]?.content !== region.content);
  console.log(`figures: ${page}: ${changed.map((region) => region.name).join(', ')}`);
}
for (const page of REGION_PAGES) {
  const path = join(ROOT, page);
  const before = readFileSync(path, 'utf8');
  const after = withRegions(page, before);
  if (after !== before) writeFileSync(path, after);
  if (after !== before) console.log(`figures: ${page}: its generated blocks`);
}
for (const note of notes) console.log(`figures: ${note}`);
const unrefreshed = [...unknown].filter((name) => !notes.some((note) => note.includes(name)));
if (unrefreshed.length > 0) throw new Error(`figures: no source for the regions ${unrefreshed.join(', ')}`);
