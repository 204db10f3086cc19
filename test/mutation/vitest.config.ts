import { fileURLToPath } from 'node:url';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig, mergeConfig } from 'vitest/config';
import base from '../vitest.config.js';

// The suites a mutant of machines/ runs (`npm run mutation`): those that drive the machines and tell a
// changed target, guard or action apart, strongest and cheapest first. A static mutant (the chart's
// config, evaluated when the module loads) runs all of them until one fails, so the order is the speed.
const SUITES = [
  // The names a chart uses are implemented (a name emptied or misspelt drops an effect silently): milliseconds.
  'test/model-checking/chart-names.test.ts',
  // Targeted and cheap: the edges the explorations leave out.
  'test/unit/tool-results.test.ts',
  'test/unit/tool-call-logic.test.ts',
  'test/unit/turn-batch.test.ts',
  'test/model-checking/master-resume.test.ts',
  'test/model-checking/master-decisions.test.ts',
  'test/model-checking/turn-decisions.test.ts',
  'test/model-checking/turn-resume.test.ts',
  'test/model-checking/unprovided.test.ts',
  'test/model-checking/tool-call.test.ts',
  'test/model-checking/broken-guards.test.ts',
  // A batch of three approvals in every order (~1 s): a verdict on a call decided already changes nothing.
  'test/model-checking/turn-approvals.test.ts',
  'test/model-checking/found-bugs.test.ts',
  'test/scenarios/lifecycle.test.ts',
  'test/scenarios/tools-dispatch.test.ts',
  'test/scenarios/tools-approval.test.ts',
  'test/scenarios/retries.test.ts',
  'test/scenarios/overflow.test.ts',
  'test/scenarios/cancellation.test.ts',
  'test/scenarios/steering-abort-history.test.ts',
  'test/scenarios/max-turns-report.test.ts',
  'test/scenarios/tools-progress.test.ts',
  'test/scenarios/tools-validation.test.ts',
  'test/scenarios/tools-predispatch.test.ts',
  'test/scenarios/turn-policies.test.ts',
  'test/scenarios/loop-policies.test.ts',
  'test/scenarios/budget-and-report-edges.test.ts',
  'test/hostile/internal-errors.test.ts',
  'test/hostile/timeouts.test.ts',
  'test/hostile/abort.test.ts',
  'test/hostile/steering.test.ts',
  'test/hostile/decisions.test.ts',
  // The full explorations last: they kill most, but the turn's takes ~6 s of a ~9 s run, and a mutant the
  // cheap suites kill first never pays for it.
  'test/model-checking/master.test.ts',
  'test/model-checking/turn.test.ts',
];

const rank = (spec: TestSpecification) => SUITES.findIndex((suite) => spec.moduleId.endsWith(suite));

class StrongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}

const config = mergeConfig(
  base,
  defineConfig({
    test: {
      root: fileURLToPath(new URL('../..', import.meta.url)),
      // One worker per run, shared by the files (imports once: 12 s → 4 s a run). Each run still gets a
      // fresh worker, so a static mutant is evaluated anew.
      isolate: false,
      // A mutant that leaves a run waiting fails here, not at Stryker's timeout (which restarts the runner).
      testTimeout: 8_000,
      sequence: { sequencer: StrongestFirst },
      // A mutant is killed by a behaviour the tests see, never by a path count the docs state.
      env: { AGENTCHART_FIGURES_UNCHECKED: '1' },
    },
  }),
);
// mergeConfig would append to the base's include list: this one replaces it.
config.test!.include = SUITES;
export default config;
