import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** A test that did not run, as the skip report lists it. */
export interface SkippedTest {
  file: string;
  test: string;
  /** What the test gave `context.skip(note)`, if anything. */
  note: string | null;
}

/**
 * Writes every skipped test of the run to `path` (JSON), for `.ci/run` to compare with the skips it
 * expects (test/support/expected-skips.ts). Registered by test/vitest.config.ts when
 * `AGENTCHART_SKIPS_FILE` names the file.
 */
export class SkipReporter implements Reporter {
  constructor(private readonly path: string) {}

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const skipped: SkippedTest[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state !== 'skipped') continue;
        skipped.push({ file: module.relativeModuleId, test: test.fullName, note: result.note ?? null });
      }
    }
    mkdirSync(dirname(this.path), { recursive: true });
    writeFileSync(this.path, `${JSON.stringify({ modules: testModules.length, skipped }, null, 2)}\n`);
  }
}
