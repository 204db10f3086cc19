import { existsSync, readFileSync } from 'node:fs';
import { EXPECTED_SKIPS, type ExpectedSkip } from './expected-skips.js';
import type { SkippedTest } from './skip-reporter.js';

/**
 * `tsx test/support/check-skips.ts <skips file> <run>`, run by `.ci/run` after each test run: prints
 * every skipped test and exits 1 when one is not in test/support/expected-skips.ts for this run.
 */
const [file, run] = process.argv.slice(2) as [string | undefined, ExpectedSkip['run'] | undefined];
if (!file || !run) throw new Error('usage: check-skips.ts <skips file> <run>');
if (!existsSync(file)) {
  console.error(`ci: ${file} was not written: the test run did not finish, so its skips are unknown`);
  process.exit(1);
}
const { modules, skipped } = JSON.parse(readFileSync(file, 'utf8')) as { modules: number; skipped: SkippedTest[] };
const expected = (test: SkippedTest) =>
  EXPECTED_SKIPS.find((entry) => entry.run === run && entry.file === test.file && entry.test === test.test);
const unexpected = skipped.filter((test) => !expected(test));
console.log(`ci: ${run}: ${skipped.length} skipped test(s) in ${modules} test files`);
for (const test of skipped) {
  const why = expected(test)?.reason ?? 'NOT EXPECTED';
  console.log(`  - ${test.file} > ${test.test}${test.note ? ` (${test.note})` : ''}: ${why}`);
}
if (unexpected.length > 0) {
  console.error(
    `ci: ${unexpected.length} test(s) skipped that test/support/expected-skips.ts does not expect for ${run}: ` +
      'make them run here, or add them there with the reason',
  );
  process.exit(1);
}
