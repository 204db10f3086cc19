import { describe, expect, it } from 'vitest';
import { assertSuite, suiteNamed } from './suites.js';

/** One CI property per suite: its title, its run count, and the count and time printed. */
export function suiteTest(name: string): void {
  const suite = suiteNamed(name);
  describe(`interleavings: ${suite.name}`, () => {
    it(suite.title, async () => {
      const started = performance.now();
      const runs = await assertSuite(suite);
      console.log(`interleavings/${suite.name}: ${runs} interleavings, 0 violations, ${Math.round(performance.now() - started)} ms`);
      expect(runs).toBe(suite.ciRuns);
    }, 120_000);
  });
}
