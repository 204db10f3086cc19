import { describe, expect, it } from 'vitest';
import { describeReport, runScenario } from './scenario.js';
import { scriptedScheduler } from './scripted-scheduler.js';
import { afterSteps, onEvent, run, scenarioOf, type Scenario } from './spec.js';

/**
 * Violations the interleavings found (V3–V9, all fixed), each kept as its minimal scenario and
 * order of tasks (the scheduler releases the pending task named next, else the oldest). The whole
 * space runs in CI as the `full` suite.
 */

async function violationsOf(scenario: Scenario, order: string[] = []): Promise<string[]> {
  const scheduler = scriptedScheduler(order);
  const report = await runScenario(scenario, scheduler);
  if (report.violations.length > 0) console.log(describeReport(report, scheduler));
  return report.violations;
}

const text = { text: true, calls: [], end: { kind: 'done' as const } };

describe('race regressions: violations the interleavings found stay fixed', () => {
  it('V3a steer() from an agentEnd subscriber is dropped: the master already ended, (fixed: it stays queued)', async () => {
    expect(await violationsOf(scenarioOf({ actions: [onEvent('agentEnd', { kind: 'steer' })] }))).toEqual([]);
  });

  it('V3b steer() from the subscriber of the turnEnd that an abort during backoff publishes is dropped', async () => {
    const replies = [{ text: false, calls: [], end: { kind: 'error' as const, error: 'rateLimit' as const } }];
    const scenario = scenarioOf({ config: { maxAttempts: 2 }, replies, actions: [onEvent('retry', { kind: 'abort' }), onEvent('turnEnd', { kind: 'steer' })] });
    expect(await violationsOf(scenario)).toEqual([]);
  });

  it('V4a abort() from the messageEnd subscriber of a reply that calls a guarded tool: the approval handler is still asked', async () => {
    const replies = [{ text: false, calls: [run('guarded')], end: { kind: 'done' as const } }];
    expect(await violationsOf(scenarioOf({ replies, actions: [onEvent('messageEnd', { kind: 'abort' })] }))).toEqual([]);
  });

  it('V4b abort() from a toolApprovalRequested subscriber: the request is never resolved and the handler runs after agentEnd', async () => {
    const replies = [{ text: false, calls: [run('guarded')], end: { kind: 'done' as const } }];
    expect(await violationsOf(scenarioOf({ replies, actions: [onEvent('toolApprovalRequested', { kind: 'abort' })] }))).toEqual([]);
  });

  it('V4c abort() from a toolApprovalResolved subscriber: the next call is sent to the approval handler after agentEnd, uncounted', async () => {
    const replies = [{ text: false, calls: [run('guarded'), run('guarded')], end: { kind: 'done' as const } }];
    expect(await violationsOf(scenarioOf({ replies, actions: [onEvent('toolApprovalResolved', { kind: 'abort' })] }))).toEqual([]);
  });

  it('V5 abort while a post-turn policy runs: its later replace verdict rewrites the history of the ended run', async () => {
    const replies = [{ text: false, calls: [run('work')], end: { kind: 'done' as const } }];
    const scenario = scenarioOf({ replies, policies: { postTurn: ['replace'] }, actions: [afterSteps({ kind: 'abort' })] });
    expect(await violationsOf(scenario, ['model call 0 (primary) first event', 'model call 0 (primary) done', 'tool c0_0 finishes', 'action 0: abort', 'postTurn #0'])).toEqual([]);
  });

  it('V6a abort() from the turnEnd subscriber of the last turn is lost: post-loop policies run after it, the run ends completed', async () => {
    expect(await violationsOf(scenarioOf({ replies: [text], policies: { postLoop: [] }, actions: [onEvent('turnEnd', { kind: 'abort' })] }))).toEqual([]);
  });

  it('V6b abort() from the messageEnd subscriber of a tool reply: pre-dispatch policies run after it', async () => {
    const replies = [{ text: false, calls: [run('work')], end: { kind: 'done' as const } }];
    expect(await violationsOf(scenarioOf({ replies, policies: { preDispatch: [] }, actions: [onEvent('messageEnd', { kind: 'abort' })] }))).toEqual([]);
  });

  it('V7 abort while a pre-dispatch policy runs: the policies of the remaining calls run after agentEnd', async () => {
    const replies = [{ text: false, calls: [run('work'), run('work')], end: { kind: 'done' as const } }];
    const scenario = scenarioOf({ replies, policies: { preDispatch: [] }, actions: [afterSteps({ kind: 'abort' })] });
    expect(await violationsOf(scenario, ['model call 0 (primary) first event', 'model call 0 (primary) done', 'action 0: abort', 'preDispatch #0'])).toEqual([]);
  });

  it('V8 abort() from a toolExecutionStart subscriber: the tool body still runs, after agentEnd', async () => {
    const replies = [{ text: false, calls: [run('work')], end: { kind: 'done' as const } }];
    expect(await violationsOf(scenarioOf({ replies, actions: [onEvent('toolExecutionStart', { kind: 'abort' })] }))).toEqual([]);
  });

  it('V9 a steering message committed by a pre-turn Stop gets a receipt naming the previous turn', async () => {
    const scenario = scenarioOf({ replies: [text], policies: { preTurn: ['continue', 'stop'] }, actions: [afterSteps({ kind: 'steer' })] });
    expect(await violationsOf(scenario, ['preTurn #0', 'model call 0 (primary) first event', 'action 0: steer'])).toEqual([]);
  });

});
