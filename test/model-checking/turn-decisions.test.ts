import { describe, expect, it } from 'vitest';
import { initialTransition, transition, type AnyEventObject } from 'xstate';
import type { ToolCallOutput } from '../../machines/tool-call.machine.js';
import { unfinishedText } from '../../machines/tool-results.js';
import { ended, initialContext, type TurnContext } from '../../machines/turn.context.js';
import { callInput } from '../../machines/turn.setup.js';
import type { ModelReply, PreDispatchOutput, TurnFeatures, TurnInput, TurnOutput } from '../../machines/turn.types.js';
import { activeDelays, activeInvocations, doneEvent } from './harness/explore.js';
import { POLICY_NOTE, REPLIES } from './turn-fixtures.js';
import { NO_FEATURES, prepare, provideTurn, resumedInput, turnInput, type TurnConfig } from './turn-model.js';

/**
 * The turn's decisions at their edges, on its real transitions and guards: what the explorations never
 * offer (a reply marked aborted only by its error, answers kept before the requests) and the exact
 * values the turn hands on (results of a cancelled batch, a post-turn stop, a resumed call's input).
 */

const PARALLEL: TurnFeatures = { ...NO_FEATURES, execution: { kind: 'parallel' } };
const SEQUENTIAL: TurnFeatures = { ...NO_FEATURES, execution: { kind: 'sequential' } };
const APPROVALS: TurnConfig = { name: 'approvals', approvals: true, partition: 'valid', replies: [] };
const NO_APPROVALS: TurnConfig = { ...APPROVALS, approvals: false };

type Snapshot = ReturnType<typeof initialTransition<ReturnType<typeof provideTurn>>>[0];

const logic = provideTurn();

function start(features: TurnFeatures): Snapshot {
  const [snapshot] = initialTransition(logic, turnInput(features, 'freshLastChance'));
  return snapshot;
}

function send(snapshot: Snapshot, event: AnyEventObject): { next: Snapshot; actions: string[] } {
  const [next, actions] = transition(logic, snapshot, event as never);
  return { next, actions: actions.map((action) => action.type) };
}

/** The done event of the invoked effect `src`, with its output. */
function finish(snapshot: Snapshot, src: string, output: unknown): Snapshot {
  const invoked = activeInvocations(snapshot).find((entry) => entry.src === src);
  if (!invoked) throw new Error(`no "${src}" is invoked in ${JSON.stringify(snapshot.value)}`);
  return send(snapshot, doneEvent(invoked.id, output)).next;
}

/** The model's reply, its calls prepared as the runtime prepares them. */
const replied = (snapshot: Snapshot, reply: ModelReply, config: TurnConfig = NO_APPROVALS) =>
  finish(snapshot, 'callModel', { ...reply, prepared: prepare(reply, config) });

/** A tool-call actor ended (its tool ran, or the turn's command settled it). */
function callEnded(snapshot: Snapshot, position: number, content: string, started = true): Snapshot {
  const call = snapshot.context.prepared.find((entry) => entry.position === position)?.call;
  if (!call) throw new Error(`no call at ${position}`);
  const result = { role: 'toolResult', toolCallId: call.id, toolName: call.name, content, isError: false } as const;
  const output: ToolCallOutput = { position, result, started };
  return send(snapshot, doneEvent(`call-${position}`, output)).next;
}

const output = (snapshot: Snapshot) => snapshot.output as TurnOutput;
const contents = (snapshot: Snapshot) => output(snapshot).toolResults.map((result) => result.content);

describe('turn: how a reply is classified', () => {
  it('a reply whose error says aborted ends the turn aborted, whatever its stop reason says', () => {
    const reply: ModelReply = { ...REPLIES.aborted, message: { ...REPLIES.aborted.message, stopReason: 'error' } };
    const ended = finish(start(NO_FEATURES), 'callModel', reply);
    expect(ended.status).toBe('done');
    expect(output(ended)).toMatchObject({ kind: 'aborted', turnEndReason: 'aborted' });
  });
});

describe('turn: which way the calls go', () => {
  it('a custom strategy asks the partition first, even when nothing else is checked before dispatch', () => {
    const custom = replied(start(NO_FEATURES), REPLIES.oneCall);
    expect(custom.value).toEqual({ TOOL_EXECUTION: 'partitioning' });
  });

  it('a fixed strategy never asks the partition: after pre-dispatch the calls start', () => {
    const checking = replied(start({ ...PARALLEL, preDispatchPolicies: true }), REPLIES.oneCall);
    expect(checking.value).toEqual({ TOOL_EXECUTION: 'runningPreDispatchPolicies' });
    const cleared = checking.context.prepared.map((entry) => ({ ...entry, cleared: true }));
    const verdict: PreDispatchOutput = { kind: 'continue', prepared: cleared, skipped: [], injected: [] };
    const running = finish(checking, 'runPreDispatchPolicies', verdict);
    expect(running.value).toEqual({ TOOL_EXECUTION: 'running' });
    expect(running.context.batch?.starting).toEqual([0]);
  });

  it('an invalid custom partition starts nothing: every call is settled with why, the turn ends toolsExecuted', () => {
    const partitioning = replied(start(NO_FEATURES), REPLIES.twoCalls);
    const ended = finish(partitioning, 'partitionCalls', { invalid: 'index 2 is out of range' });
    const why = unfinishedText({ kind: 'invalidPartition', reason: 'index 2 is out of range' });
    expect(contents(ended)).toEqual([why, why]);
    expect(output(ended)).toMatchObject({ kind: 'success', turnEndReason: 'toolsExecuted' });
  });
});

describe('turn: pre-turn policies', () => {
  it('a policy stops the session before the turn starts: finished / stopped, no turnEndReason (no turn to end)', () => {
    const checking = start({ ...NO_FEATURES, preTurnPolicies: true });
    expect(checking.value).toEqual({ USER_INPUT: 'runningPreTurnPolicies' });
    const stopped = finish(checking, 'runPreTurnPolicies', { stopped: true, injected: [] });
    expect(stopped.value).toBe('stoppedBeforeStart');
    expect(output(stopped)).toMatchObject({ kind: 'finished', detail: 'stopped', turnEndReason: null, error: null });
  });
});

describe('turn: pre-dispatch', () => {
  it('a policy stops the batch: the turn ends finished / stopped, each call settled with the reason, no call starts', () => {
    const checking = replied(start({ ...PARALLEL, preDispatchPolicies: true }), REPLIES.twoCalls);
    const verdict: PreDispatchOutput = { kind: 'stop', prepared: [], skipped: [], injected: [], reason: 'not today' };
    const { next, actions } = send(checking, doneEvent(activeInvocations(checking)[0]!.id, verdict));
    expect(actions).not.toContain('startCalls');
    expect(next.status).toBe('done');
    const why = unfinishedText({ kind: 'stopped', reason: 'not today' });
    expect(contents(next)).toEqual([why, why]);
    expect(output(next)).toMatchObject({ kind: 'finished', detail: 'stopped', turnEndReason: 'stopped', error: null });
  });
});

describe('turn: approvals asked together', () => {
  const asking = () => replied(start(PARALLEL), REPLIES.threeWrites, APPROVALS);

  it('an abort before any request went out withdraws nothing', () => {
    const requesting = asking();
    expect(requesting.value).toEqual({ TOOL_EXECUTION: { askingApproval: 'requesting' } });
    const { next, actions } = send(requesting, { type: 'ABORT' });
    expect(actions).not.toContain('withdrawApprovals');
    expect(output(next).kind).toBe('aborted');
  });

  it('answers kept for two calls before the requests went out: both are kept, and each decides its call', () => {
    let snapshot = asking();
    snapshot = send(snapshot, { type: 'APPROVAL_DECIDED', toolCallId: 'call_7', verdict: { kind: 'approved' } }).next;
    const denied = { kind: 'denied', reason: 'not that one' } as const;
    snapshot = send(snapshot, { type: 'APPROVAL_DECIDED', toolCallId: 'call_6', verdict: denied }).next;
    // A second answer for a call keeps the first.
    snapshot = send(snapshot, { type: 'APPROVAL_DECIDED', toolCallId: 'call_7', verdict: denied }).next;
    expect(snapshot.context.decisions.map((decision) => decision.toolCallId)).toEqual(['call_7', 'call_6']);
    const resolved: unknown[] = [];
    for (const id of ['call_6', 'call_7', 'call_8']) {
      const step = send(snapshot, { type: 'APPROVAL_REQUESTED', toolCallId: id });
      snapshot = step.next;
      resolved.push(
        ...step.actions.filter((action) => action === 'announceApprovalResolved' || action === 'countRejectedCall'),
      );
    }
    // Decided in the order the answers came: call_7 approved, call_6 refused (and counted); call_8 still waits.
    expect(resolved).toEqual(['announceApprovalResolved', 'announceApprovalResolved', 'countRejectedCall']);
    expect(snapshot.value).toEqual({ TOOL_EXECUTION: { askingApproval: 'waiting' } });
    expect(snapshot.context.prepared.map((entry) => [entry.call.id, entry.approved])).toEqual([
      ['call_7', true],
      ['call_8', false],
    ]);
    expect(snapshot.context.settled?.result.content).toContain('not that one');
  });
});

describe('turn: a batch cancelled while calls wait to start', () => {
  const runningTwo = () => {
    const running = replied(start({ ...SEQUENTIAL, steeringInterrupts: true }), REPLIES.twoCalls);
    expect(running.value).toEqual({ TOOL_EXECUTION: 'running' });
    expect(running.context.batch?.starting).toEqual([0]);
    return running;
  };

  it('steering: after the grace period the running call is cancelled, the one that never started is skipped', () => {
    const holding = send(runningTwo(), { type: 'STEERING_ARRIVED' }).next;
    expect(holding.value).toEqual({ TOOL_EXECUTION: 'holding' });
    const [grace] = activeDelays(holding);
    const cancelling = send(holding, grace?.event as AnyEventObject).next;
    expect(cancelling.value).toEqual({ TOOL_EXECUTION: 'cancelling' });
    const ended = callEnded(cancelling, 0, 'cancelled by steering');
    expect(contents(ended)).toEqual(['cancelled by steering', unfinishedText({ kind: 'steeringSkipped' })]);
    expect(output(ended)).toMatchObject({ kind: 'success', turnEndReason: 'steeringInterrupt' });
  });

  it('abort: the running call is cancelled, the one that never started gets the aborted result', () => {
    const cancelling = send(runningTwo(), { type: 'ABORT' }).next;
    const ended = callEnded(cancelling, 0, 'cancelled by abort');
    expect(contents(ended)).toEqual(['cancelled by abort', unfinishedText({ kind: 'aborted' })]);
    expect(output(ended)).toMatchObject({ kind: 'aborted', turnEndReason: 'aborted' });
  });
});

describe('turn: post-turn policies', () => {
  const features = { ...PARALLEL, preDispatchPolicies: true, postTurnPolicies: true };

  it('a stop after the tools ran: the turn ends finished / stopped, keeps why it ended and what pre-dispatch injected', () => {
    const checking = replied(start(features), REPLIES.oneCall);
    const cleared = checking.context.prepared.map((entry) => ({ ...entry, cleared: true }));
    const verdict: PreDispatchOutput = { kind: 'continue', prepared: cleared, skipped: [], injected: [POLICY_NOTE] };
    const running = finish(checking, 'runPreDispatchPolicies', verdict);
    const policies = callEnded(running, 0, 'ok');
    expect(policies.value).toEqual({ RESPONSE: 'runningPostTurnPolicies' });
    const ended = finish(policies, 'runPostTurnPolicies', { stopped: true, injected: [], assistant: null });
    expect(output(ended)).toMatchObject({
      kind: 'finished',
      detail: 'stopped',
      turnEndReason: 'toolsExecuted',
      error: null,
      injected: [POLICY_NOTE],
    });
  });
});

describe('turn: what a call and a fresh turn start with', () => {
  it("a resumed turn's call that started before the restart is not announced again; a new one is", () => {
    const resumed: TurnInput = resumedInput(NO_FEATURES);
    const context: TurnContext = {
      ...initialContext(resumed),
      input: { ...resumed, resume: { ...resumed.resume!, startedCallIds: ['call_1'] } },
    };
    const [first, second] = prepare(REPLIES.twoCalls, NO_APPROVALS).prepared;
    expect(callInput(context, first!).announced).toBe(true);
    expect(callInput(context, second!).announced).toBe(false);
    expect(callInput(initialContext(turnInput(NO_FEATURES, 'freshLastChance')), first!).announced).toBe(false);
  });

  it('a fresh turn keeps no answers and has decided nothing (its decision reads as a plain success until made)', () => {
    const context = initialContext(turnInput(NO_FEATURES, 'freshLastChance'));
    expect(context.decisions).toEqual([]);
    expect(context.ending).toBeNull();
    expect(ended(context)).toEqual({ kind: 'success', turnEndReason: 'complete', error: null });
  });
});
