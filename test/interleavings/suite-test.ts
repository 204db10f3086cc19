import { describe, expect, it } from 'vitest';
import { reportStats } from '../support/stats.js';
import { assertSuite, suiteNamed } from './suites.js';

/** One CI property per suite: its title, its run count, and the count and time (printed on AGENTCHART_TEST_STATS=1). */
export function suiteTest(name: string): void {
  const suite = suiteNamed(name);
  describe(`interleavings: ${suite.name}`, () => {
    it(
      suite.title,
      async () => {
        const started = performance.now();
        const runs = await assertSuite(suite);
        const ms = Math.round(performance.now() - started);
        reportStats(`interleavings/${suite.name}: ${runs} interleavings, 0 violations, ${ms} ms`);
        expect(runs).toBe(suite.ciRuns);
      },
      120_000,
    );
  });
}
