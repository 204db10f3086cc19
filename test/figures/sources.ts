import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { KILL_POINTS } from '../durability/child-process.js';
import { FULL_SUITE, SUITES } from '../interleavings/suites.js';
import { render, ROOT } from './figures.js';

/** Figures read from the test code itself: what CI runs. Cheap, so a test keeps them fresh. */
export function suiteFigures(): Record<string, string> {
  const interleavings = [...SUITES, FULL_SUITE].reduce((sum, suite) => sum + suite.ciRuns, 0);
  return { interleavings: render.count(interleavings), 'crash-points': render.count(KILL_POINTS.length) };
}

/** Where `npm run mutation` writes its report (test/mutation/stryker.config.mjs). */
export const MUTATION_REPORT = 'test/.build/mutation/machines.json';

interface MutationReport {
  files: Record<string, { mutants: Array<{ status: string; static?: boolean }> }>;
}

/**
 * The mutation score from the last `npm run mutation` here (its report, with its date), or null
 * when there is none: killed and timed-out mutants over every mutant a test could tell apart.
 */
export function mutationFigure(): { text: string; date: Date } | null {
  const path = join(ROOT, MUTATION_REPORT);
  if (!existsSync(path)) return null;
  const report = JSON.parse(readFileSync(path, 'utf8')) as MutationReport;
  const mutants = Object.values(report.files).flatMap((file) => file.mutants);
  const of = (status: string) => mutants.filter((mutant) => mutant.status === status).length;
  const [killed, timedOut, survived, noCoverage] = [of('Killed'), of('Timeout'), of('Survived'), of('NoCoverage')];
  const counted = killed + timedOut + survived + noCoverage;
  const { count, percent } = render;
  const text =
    `${percent((killed + timedOut) / counted)} (${count(mutants.length)} mutants, ` +
    `${count(mutants.filter((mutant) => mutant.static).length)} of them static: ${count(killed)} killed, ` +
    `${count(timedOut)} timed out, ${count(survived)} survived, ${count(noCoverage)} not covered; ` +
    `${count(of('Ignored'))} marked equivalent, ${count(of('RuntimeError') + of('CompileError'))} that crash at load ` +
    `not counted; ${percent(killed / counted)} counting kills only)`;
  return { text, date: statSync(path).mtime };
}

/** Vitest's JSON report (`--reporter=json`): what ran, by file. */
interface VitestReport {
  numPassedTests: number;
  testResults: Array<{ name: string; assertionResults: Array<{ status: string }> }>;
}

/** Test counts from a whole run's JSON report: every passed test, and the hostile-input corpus. */
export function testFigures(report: VitestReport): Record<string, string> {
  const passedIn = (prefix: string) =>
    report.testResults
      .filter((file) => file.name.startsWith(join(ROOT, prefix)))
      .reduce((sum, file) => sum + file.assertionResults.filter((test) => test.status === 'passed').length, 0);
  return {
    tests: render.tests({ tests: report.numPassedTests, files: report.testResults.length }),
    'hostile-tests': render.count(passedIn('test/hostile/')),
  };
}
