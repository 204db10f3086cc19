import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Message } from 'agentchart';
import { checkScenario, type CheckInput } from './checks.js';
import { runScenario } from './scenario.js';
import { scriptedScheduler } from './scripted-scheduler.js';
import { afterSteps, onEvent, run, scenarioArbitrary, scenarioOf } from './spec.js';

/** The interleaving harness itself: deterministic replays, and checks that do fail on a broken run. */

/** A tool turn, a steering message that interrupts it, then the steered text turn. */
const steered = scenarioOf({
  replies: [
    {
      text: true,
      calls: [run('work'), run('work', { outcome: 'ok', updates: 1, honorsSignal: true })],
      end: { kind: 'done' },
    },
  ],
  actions: [afterSteps({ kind: 'steer' }, 3)],
});
const STEERED_ORDER = [
  'model call 0 (primary) first event',
  'model call 0 (primary) done',
  'tool c0_0 finishes',
  'action 0 (steer) waits',
  'action 0 (steer) waits',
  'action 0 (steer) waits',
  'action 0: steer',
  'clock reaches 250 ms',
];

/** The checked input with history, queues, counters and runs replaced (the agent's live state is not touched). */
function altered(
  input: CheckInput,
  change: { messages?: Message[]; counters?: Partial<CheckInput['agent']['counters']>; runs?: CheckInput['runs'] },
): CheckInput {
  const messages = change.messages ?? [...input.agent.messages];
  const counters = { ...input.agent.counters, ...change.counters };
  const snapshot = input.agent.snapshot();
  return {
    ...input,
    runs: change.runs ?? input.runs,
    agent: { messages, counters, running: false, snapshot: () => ({ ...snapshot, messages, counters }) },
  };
}

describe('interleaving harness', () => {
  it('replays: a scenario and its order of tasks give the same events, trace and verdicts every time', async () => {
    const first = await runScenario(steered, scriptedScheduler(STEERED_ORDER));
    const second = await runScenario(steered, scriptedScheduler(STEERED_ORDER));
    const shape = (events: typeof first.events) =>
      events.map(
        (e) => `${e.type}${'toolCallId' in e ? `:${e.toolCallId}` : ''}${e.type === 'turnEnd' ? `:${e.reason}` : ''}`,
      );
    expect(first.violations).toEqual([]);
    expect(shape(second.events)).toEqual(shape(first.events));
    expect(second.trace).toEqual(first.trace);
    expect(first.events.filter((e) => e.type === 'turnEnd').map((e) => e.type === 'turnEnd' && e.reason)).toEqual([
      'steeringInterrupt',
      'complete',
    ]);
    expect(first.trace).toEqual(['action 0: steer("steer 0") (during run 0)', 'run 0 ends: completed/naturalEnd']);
  });

  it('replays: one fast-check seed gives the same interleaving twice (what --seed/--path rely on)', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary(), fc.integer(), async (scenario, seed) => {
        const [a] = fc.sample(fc.scheduler(), { seed, numRuns: 1 });
        const [b] = fc.sample(fc.scheduler(), { seed, numRuns: 1 });
        const first = await runScenario(scenario, a!);
        const second = await runScenario(scenario, b!);
        const labels = (s: unknown) => String(s).replace(/task\$\{\d+\}/g, '');
        expect(labels(b)).toEqual(labels(a));
        expect(second.trace).toEqual(first.trace);
        expect(second.events.map((e) => e.type)).toEqual(first.events.map((e) => e.type));
      }),
      { numRuns: 60 },
    );
  });

  it('the checks fail on a dropped steering message, a lost tool result, wrong counters, a missed abort and a hung run', async () => {
    const report = await runScenario(steered, scriptedScheduler(STEERED_ORDER));
    const input = report.checked;
    expect(checkScenario(input)).toEqual([]);

    const withoutSteering = input.agent.messages.filter((m) => !(m.role === 'user' && m.content === 'steer 0'));
    expect(checkScenario(altered(input, { messages: withoutSteering }))).toEqual(
      expect.arrayContaining([
        'nothing lost: "steer 0" (in history 0×, queued 0×) was dropped',
        'receipt: "steer 0" (in history 0×, queued 0×) is reported delivered (turn 1) but is not in history once',
        'counters: steeringDelivered 1 ≠ 0 steering messages in history',
      ]),
    );
    const withoutResult = input.agent.messages.filter((m) => !(m.role === 'toolResult' && m.toolCallId === 'c0_1'));
    expect(checkScenario(altered(input, { messages: withoutResult }))).toEqual(
      expect.arrayContaining(['parity: final history: tool call c0_1 of message 1 has no result before message 4']),
    );
    expect(checkScenario(altered(input, { counters: { approvalsRequested: 1, turns: 3 } }))).toEqual(
      expect.arrayContaining([
        'counters: the approval handler ran 0× but approvalsRequested is 1',
        'counters: turns 3 ≠ 2 turnStart events',
      ]),
    );
    const [only] = input.runs;
    const abortedEarly = [{ ...only!, aborts: [{ at: 1, moment: 1, release: 0 }] }];
    expect(checkScenario(altered(input, { runs: abortedEarly }))).toEqual(
      expect.arrayContaining([
        'abort: run 0 was aborted while running (after event #1) but ended completed/naturalEnd',
      ]),
    );
    expect(checkScenario(altered(input, { runs: [{ ...only!, result: null }] }))).toEqual([
      'hang: run 0 never resolved its result',
    ]);
  });

  it('an abort from a subscriber wins when it lands before the turn settles: the run ends aborted at once', async () => {
    const scenario = scenarioOf({
      replies: [{ text: true, calls: [run('work')], end: { kind: 'done' } }],
      actions: [onEvent('beforeModelCall', { kind: 'abort' })],
    });
    const report = await runScenario(scenario, scriptedScheduler());
    expect(report.violations).toEqual([]);
    expect(report.results.map((r) => r && `${r.status}/${r.endReason}`)).toEqual(['aborted/aborted']);
  });
});
