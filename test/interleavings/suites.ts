import fc from 'fast-check';
import { describeReport, runScenario, type ScenarioReport } from './scenario.js';
import { FULL_FOCUS, scenarioArbitrary, TRIGGER_EVENTS, type Focus, type Scenario } from './spec.js';

/**
 * The property suites: each explores one part of the scenario space with the same driver and the
 * same checks. CI runs `ciRuns` of each; `npm run fuzz` runs many more. The `full` suite is the
 * whole space (test/interleavings/race-regressions.test.ts keeps the minimal reproductions of the
 * violations it found, all fixed).
 */

export interface Suite {
  name: string;
  title: string;
  focus: Partial<Focus>;
  ciRuns: number;
}

const NO_REENTRY: Focus['reentrant'] = { abort: [], steer: [], followUp: [], tick: [] };

export const SUITES: Suite[] = [
  {
    name: 'tools',
    title:
      'tool completions, progress updates, tool time limits, steering (grace on the clock), follow-ups and abort race on the real actors',
    focus: { approvals: false, errors: false, stalls: false, policies: {}, reentrant: NO_REENTRY },
    ciRuns: 600,
  },
  {
    name: 'approvals',
    title:
      'approval resolutions (approve, deny, approveWith, throw, reject, invalid) race tool completions, steering and abort',
    focus: {
      errors: false,
      stalls: false,
      policies: {},
      reentrant: NO_REENTRY,
      actions: { abort: 2, steer: 2, followUp: 1, tick: 1 },
    },
    ciRuns: 500,
  },
  {
    name: 'model',
    title:
      'model replies (0–3 tool calls, every error kind, stalls, truncation, fallback) race backoff and the model idle timeout on the clock, abort and steering',
    focus: { approvals: false, policies: {}, reentrant: NO_REENTRY },
    ciRuns: 600,
  },
  {
    name: 'queues',
    title:
      'steering and follow-up messages are delivered exactly once or stay queued, across two runs, also when sent from subscribers',
    focus: {
      approvals: false,
      errors: false,
      policies: {},
      actions: { abort: 1, steer: 4, followUp: 4, tick: 1 },
      reentrant: { abort: [], steer: TRIGGER_EVENTS, followUp: TRIGGER_EVENTS, tick: [] },
      maxActions: 6,
    },
    ciRuns: 500,
  },
  {
    name: 'policies',
    title:
      'pre-turn, post-turn and post-loop policies waiting on the scheduler race abort, steering and tool completions',
    focus: {
      errors: false,
      policies: {
        preTurn: ['continue', 'inject', 'throw'],
        postTurn: ['continue', 'stop', 'inject', 'throw'],
        postLoop: ['continue', 'stop', 'inject', 'throw'],
      },
      reentrant: NO_REENTRY,
    },
    ciRuns: 500,
  },
  {
    name: 'reentrant',
    title:
      'abort() and clock moves called from inside event subscribers while the runtime is publishing (steer and follow-up: see queues)',
    focus: {
      policies: {},
      reentrant: { abort: TRIGGER_EVENTS, steer: [], followUp: [], tick: TRIGGER_EVENTS },
    },
    ciRuns: 500,
  },
];

/** The whole space: every action from anywhere, every policy verdict, every reply. */
export const FULL_SUITE: Suite = { name: 'full', title: 'the whole scenario space', focus: FULL_FOCUS, ciRuns: 600 };

export function suiteNamed(name: string): Suite {
  const suite = [...SUITES, FULL_SUITE].find((s) => s.name === name);
  if (!suite)
    throw new Error(`unknown suite "${name}"; suites: ${[...SUITES, FULL_SUITE].map((s) => s.name).join(', ')}`);
  return suite;
}

/** XState's warnings about events sent to actors that already stopped: counted, not printed (they are expected in races). */
const STOPPED_ACTOR = /was sent to stopped actor/;

async function quietly<T>(run: () => Promise<T>): Promise<T> {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && STOPPED_ACTOR.test(args[0])) return;
    warn(...args);
  };
  try {
    return await run();
  } finally {
    console.warn = warn;
  }
}

export interface SuiteOptions {
  numRuns: number;
  seed?: number;
  path?: string;
  /** Called after every interleaving (progress, statistics). */
  onRun?: (scenario: Scenario, report: ScenarioReport) => void;
}

/** The property of a suite: every interleaving of every scenario passes every check. */
export function suiteProperty(suite: Suite, onRun?: SuiteOptions['onRun']) {
  return fc.asyncProperty(scenarioArbitrary(suite.focus), fc.scheduler(), async (scenario, scheduler) => {
    const report = await quietly(() => runScenario(scenario, scheduler));
    onRun?.(scenario, report);
    if (report.violations.length > 0) throw new Error(describeReport(report, scheduler));
  });
}

export function checkSuite(suite: Suite, options: SuiteOptions) {
  return fc.check(suiteProperty(suite, options.onRun), {
    numRuns: options.numRuns,
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.path !== undefined ? { path: options.path, endOnFailure: true } : {}),
  });
}

/** Asserts a suite (vitest): on failure fast-check's report carries the seed, the path and the shrunk counterexample. */
export async function assertSuite(suite: Suite, numRuns = suite.ciRuns): Promise<number> {
  let runs = 0;
  await fc.assert(
    suiteProperty(suite, () => runs++),
    { numRuns },
  );
  return runs;
}
