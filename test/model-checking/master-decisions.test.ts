import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { describeError, masterMachine, turnInputOf } from '../../machines/master.machine.js';
import type { MasterConfig, MasterContext, MasterEvent, MasterInput } from '../../machines/master.types.js';
import type { TurnOutput } from '../../machines/turn.types.js';
import { doneEvent } from './harness/explore.js';
import { provideMaster, REPORT_GUIDANCE, session, STOP_ERROR } from './master-model.js';
import { STANDARD_REPLIES } from './turn-fixtures.js';
import type { TurnConfig } from './turn-model.js';
import { reachableTurnOutcomes } from './turn-outcomes.js';

/**
 * The master's decisions at their edges, on its real transitions and guards: what the exploration's
 * environment never offers (an outcome racing an abort) and the exact bounds of its budgets.
 */

const TURN: TurnConfig = { name: 'no approvals', approvals: false, partition: 'valid', replies: STANDARD_REPLIES };
const STEER = { type: 'STEER', message: { role: 'user', content: 'steer' } } as const;
const NOTE = { role: 'user', content: 'a note from a policy' } as const;

function started(input: MasterInput = session()) {
  const logic = provideMaster();
  const [idle] = initialTransition(logic, input);
  const [running] = transition(logic, idle, { type: 'START' });
  return { logic, running };
}

/** A reachable outcome of the turn the master is running, picked by its shape. */
function outcomeOf(context: MasterContext, pick: (output: TurnOutput) => boolean): TurnOutput {
  const outcomes = reachableTurnOutcomes(TURN, turnInputOf(context));
  const found = [...outcomes.plain, ...outcomes.afterSteering, ...outcomes.afterAbort].find(({ output }) =>
    pick(output),
  );
  if (!found) throw new Error('no such outcome');
  return found.output;
}

/** The done event of an invoked turn (the master's events leave the actors' own events out). */
const done = (id: 'turn' | 'closingTurn', output: TurnOutput) => doneEvent(id, output) as unknown as MasterEvent;
const turnDone = (output: TurnOutput) => done('turn', output);

describe('master: decisions on a turn outcome', () => {
  it('a turn that ended aborted ends the session aborted, even when the master never saw the ABORT', () => {
    const { logic, running } = started();
    const aborted = outcomeOf(running.context, (output) => output.kind === 'aborted');
    const [next] = transition(logic, running, turnDone(aborted));
    expect(next.status).toBe('done');
    expect(next.output).toMatchObject({ status: 'aborted', endReason: 'aborted' });
  });

  it.each(['retryable', 'overflow'] as const)(
    'an outcome deferred to the master (%s) that races an ABORT: the open turn is closed before the session ends',
    (detail) => {
      const { logic, running } = started();
      const [aborting] = transition(logic, running, { type: 'ABORT' });
      const deferred = outcomeOf(running.context, (output) => output.kind === 'failure' && output.detail === detail);
      const [next] = transition(logic, aborting, turnDone(deferred));
      expect(next.value).toEqual({ running: 'closingTurn' });
      const closed = outcomeOf(running.context, (output) => output.kind === 'aborted');
      const [after] = transition(logic, next, done('closingTurn', closed));
      expect(after.output).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    },
  );

  it('a text-only turn with steering queued during it: the steering opens the next turn (the inner loop goes on)', () => {
    const { logic, running } = started(session({ maxTurns: 3 }));
    const [steered] = transition(logic, running, STEER);
    const text = outcomeOf(running.context, (output) => output.kind === 'success' && output.toolResults.length === 0);
    const [next] = transition(logic, steered, turnDone(text));
    expect(next.value).toEqual({ running: 'turn' });
    expect(next.context.turnInput).toEqual([STEER.message]);
    expect(next.context.steeringQueue).toEqual([]);
  });

  it('messages a post-turn policy injected open the next turn, after a text-only turn as after one with tools', () => {
    const { logic, running } = started(session({ maxTurns: 3 }));
    const text = outcomeOf(running.context, (output) => output.kind === 'success' && output.toolResults.length === 0);
    const [afterText] = transition(logic, running, turnDone({ ...text, injected: [NOTE] }));
    expect(afterText.value).toEqual({ running: 'turn' });
    expect(afterText.context.turnInput).toEqual([NOTE]);
    const tools = outcomeOf(running.context, (output) => output.kind === 'success' && output.toolResults.length > 0);
    const [afterTools] = transition(logic, running, turnDone({ ...tools, injected: [NOTE] }));
    expect(afterTools.context.turnInput).toEqual([NOTE]);
    expect(afterTools.context.pending).toEqual([]);
    const [plain] = transition(logic, running, turnDone(tools));
    expect(plain.context.turnInput).toEqual([]);
  });
});

describe('master: how a session ends on a failure', () => {
  it('a throw inside the turn: failed, fatalError, an internal error with its message, not retryable', () => {
    const { logic, running } = started();
    const error = { type: 'xstate.error.actor.turn', error: new Error('boom') } as unknown as MasterEvent;
    const [next] = transition(logic, running, error);
    expect(next.output).toMatchObject({
      status: 'failed',
      endReason: 'fatalError',
      error: { kind: 'internal', message: 'internal error: boom', retryable: false },
    });
  });

  it('a failure without a model error (a resumed reply that stopped on an error): failed, fatalError, no error', () => {
    const { logic, running } = started();
    const fatal = outcomeOf(running.context, (output) => output.detail === 'fatal');
    if (fatal.detail !== 'fatal') throw new Error('no fatal outcome reached');
    const [next] = transition(logic, running, turnDone({ ...fatal, error: null }));
    expect(next.output).toMatchObject({ status: 'failed', endReason: 'fatalError', error: null });
  });

  it('report mode: a turn that did no work is re-run with the guidance as its only input', () => {
    const { logic, running } = started(session({ maxTurns: 3, maxAttempts: 2, reportToolName: 'final_report' }));
    const text = outcomeOf(running.context, (output) => output.kind === 'success' && output.toolResults.length === 0);
    const [next] = transition(logic, running, turnDone(text));
    expect(next.value).toEqual({ running: 'turn' });
    expect(next.context.turnInput).toEqual([REPORT_GUIDANCE]);
    expect(next.context.pending).toEqual([]);
  });
});

describe('master: the model-call budget (maxTurns × maxAttempts, one call kept for every turn left)', () => {
  const config = (changes: Partial<MasterConfig>): MasterConfig => ({ ...session().config, ...changes });
  const context = (changes: Partial<MasterConfig>, counts: Partial<MasterContext['counts']>) => {
    const { running } = started(session(changes));
    return { ...running.context, config: config(changes), counts: { ...running.context.counts, ...counts } };
  };
  const retryAvailable = (changes: Partial<MasterConfig>, counts: Partial<MasterContext['counts']>) =>
    turnInputOf(context(changes, counts)).retryAvailable;

  it('the first turn of two may retry while a call stays for the second; the last call of the budget may not be spent', () => {
    const limits = { maxTurns: 2, maxAttempts: 2 };
    expect(retryAvailable(limits, { turnsThisRun: 0, modelCalls: 1, attemptsOnModel: 1 })).toBe(true);
    expect(retryAvailable(limits, { turnsThisRun: 0, modelCalls: 2, attemptsOnModel: 1 })).toBe(true);
    expect(retryAvailable(limits, { turnsThisRun: 0, modelCalls: 3, attemptsOnModel: 1 })).toBe(false);
    // The second turn: no turn left to keep a call for.
    expect(retryAvailable(limits, { turnsThisRun: 1, modelCalls: 2, attemptsOnModel: 1 })).toBe(true);
    expect(retryAvailable(limits, { turnsThisRun: 1, modelCalls: 3, attemptsOnModel: 1 })).toBe(true);
    expect(retryAvailable(limits, { turnsThisRun: 1, modelCalls: 4, attemptsOnModel: 1 })).toBe(false);
    // Attempts on the model are their own limit.
    expect(retryAvailable(limits, { turnsThisRun: 1, modelCalls: 2, attemptsOnModel: 2 })).toBe(false);
  });

  it('without a turn limit the budget never stops a retry', () => {
    expect(
      retryAvailable({ maxTurns: Infinity, maxAttempts: 2 }, { turnsThisRun: 5, modelCalls: 99, attemptsOnModel: 1 }),
    ).toBe(true);
  });

  it('report mode: a failed turn is re-run only with an attempt left and a call kept for every later turn', () => {
    const guard = masterMachine.implementations.guards.failedTurnRetryLeft as (args: {
      context: MasterContext;
    }) => boolean;
    const limits = { maxTurns: 3, maxAttempts: 3 };
    // The failed turn was counted: turnsThisRun includes it.
    expect(guard({ context: context(limits, { turnsThisRun: 1, modelCalls: 2, failedTurnRetries: 1 }) })).toBe(true);
    expect(guard({ context: context(limits, { turnsThisRun: 1, modelCalls: 2, failedTurnRetries: 2 }) })).toBe(false);
    expect(guard({ context: context(limits, { turnsThisRun: 1, modelCalls: 6, failedTurnRetries: 0 }) })).toBe(true);
    expect(guard({ context: context(limits, { turnsThisRun: 1, modelCalls: 7, failedTurnRetries: 0 }) })).toBe(false);
    expect(guard({ context: context(limits, { turnsThisRun: 2, modelCalls: 7, failedTurnRetries: 0 }) })).toBe(true);
  });
});

describe('master: describeError (the run result of an internal error)', () => {
  it('an error gives its message, else its name; anything else its string; an unprintable value says so', () => {
    expect(describeError(new Error('boom'))).toBe('boom');
    expect(describeError(new TypeError(''))).toBe('TypeError');
    expect(describeError(42)).toBe('42');
    const unprintable = {
      toString() {
        throw new Error('no');
      },
    };
    expect(describeError(unprintable)).toBe('unprintable error');
  });
});

describe('master: the runtime STOP decides the end as it arrives, and nothing after changes it', () => {
  const STOP = { type: 'STOP', error: STOP_ERROR } as const;
  const STOPPED = { by: 'runtime', status: 'failed', endReason: 'fatalError', error: STOP_ERROR };
  const thrown = (id: 'turn' | 'closingTurn') =>
    ({ type: `xstate.error.actor.${id}`, error: new Error('boom') }) as unknown as MasterEvent;

  it('during a turn: the end is assigned at once, the turn is told to abort, the master waits for it', () => {
    const { logic, running } = started();
    const [stopping, actions] = transition(logic, running, STOP);
    expect(stopping.value).toEqual({ running: 'turn' });
    expect(stopping.context.end).toEqual(STOPPED);
    expect(actions.map((action) => action.type)).toContain('forwardAbortToTurn');
    const aborted = outcomeOf(running.context, (output) => output.kind === 'aborted');
    const [ended] = transition(logic, stopping, turnDone(aborted));
    expect(ended.status).toBe('done');
    expect(ended.output).toMatchObject(STOPPED);
  });

  it('a turn that ends well in the step the STOP came: the run still ends failed (never completed)', () => {
    const { logic, running } = started();
    const [stopping] = transition(logic, running, STOP);
    const text = outcomeOf(running.context, (output) => output.kind === 'success' && output.toolResults.length === 0);
    const [ended] = transition(logic, stopping, turnDone(text));
    expect(ended.output).toMatchObject(STOPPED);
  });

  it('a turn that throws after the STOP: its log is closed, but the end stays the STOP (not an internal error)', () => {
    const { logic, running } = started();
    const [stopping] = transition(logic, running, STOP);
    const [ended, actions] = transition(logic, stopping, thrown('turn'));
    expect(actions.map((action) => action.type)).toContain('closeTurnAfterInternalError');
    expect(ended.output).toMatchObject(STOPPED);
  });

  it('a turn that throws without a STOP ends the run as an internal error', () => {
    const { logic, running } = started();
    const [ended] = transition(logic, running, thrown('turn'));
    expect(ended.output).toMatchObject({ by: 'chart', status: 'failed', endReason: 'fatalError' });
    expect(ended.output?.error).toMatchObject({ kind: 'internal', message: 'internal error: boom' });
  });

  it.each(['retryable', 'overflow'] as const)(
    'a deferred failure (%s) the STOP raced: the open turn is closed, then the run ends as the STOP decided',
    (detail) => {
      const { logic, running } = started();
      const [stopping] = transition(logic, running, STOP);
      const deferred = outcomeOf(running.context, (output) => output.kind === 'failure' && output.detail === detail);
      const [closing] = transition(logic, stopping, turnDone(deferred));
      expect(closing.value).toEqual({ running: 'closingTurn' });
      const closed = outcomeOf(running.context, (output) => output.kind === 'aborted');
      const [ended] = transition(logic, closing, done('closingTurn', closed));
      expect(ended.output).toMatchObject(STOPPED);
      const [thrownWhileClosing] = transition(logic, closing, thrown('closingTurn'));
      expect(thrownWhileClosing.output).toMatchObject(STOPPED);
    },
  );

  it.each([
    ['retryable', 'backoff'],
    ['overflow', 'overflowRecovery'],
  ] as const)(
    'a STOP while the master recovers from a %s failure (%s): the open turn is closed, the run ends failed',
    (detail, recovery) => {
      const { logic, running } = started();
      const deferred = outcomeOf(running.context, (output) => output.kind === 'failure' && output.detail === detail);
      const [recovering] = transition(logic, running, turnDone(deferred));
      expect(recovering.value).toEqual({ running: recovery });
      const [closing] = transition(logic, recovering, STOP);
      expect(closing.value).toEqual({ running: 'closingTurn' });
      expect(closing.context.end).toEqual(STOPPED);
      const closed = outcomeOf(running.context, (output) => output.kind === 'aborted');
      const [ended] = transition(logic, closing, done('closingTurn', closed));
      expect(ended.output).toMatchObject(STOPPED);
    },
  );

  it('a STOP while the turn closes after an ABORT: the run ends failed with the error, not aborted', () => {
    const { logic, running } = started();
    const [aborting] = transition(logic, running, { type: 'ABORT' });
    const deferred = outcomeOf(running.context, (output) => output.kind === 'failure' && output.detail === 'retryable');
    const [closing] = transition(logic, aborting, turnDone(deferred));
    const [stopped] = transition(logic, closing, STOP);
    expect(stopped.value).toEqual({ running: 'closingTurn' });
    expect(stopped.context.end).toEqual(STOPPED);
    const closed = outcomeOf(running.context, (output) => output.kind === 'aborted');
    const [ended] = transition(logic, stopped, done('closingTurn', closed));
    expect(ended.output).toMatchObject(STOPPED);
  });

  it('an ABORT after the STOP changes nothing: the run ends as the STOP decided', () => {
    const { logic, running } = started();
    const [stopping] = transition(logic, running, STOP);
    const [aborting] = transition(logic, stopping, { type: 'ABORT' });
    expect(aborting.context.end).toEqual(STOPPED);
    const aborted = outcomeOf(running.context, (output) => output.kind === 'aborted');
    const [ended] = transition(logic, aborting, turnDone(aborted));
    expect(ended.output).toMatchObject(STOPPED);
  });

  it('during post-loop policies: the run ends at once, failed with the error', () => {
    const { logic, running } = started(session({ postLoopPolicies: true }));
    const text = outcomeOf(running.context, (output) => output.kind === 'success' && output.toolResults.length === 0);
    const [policies] = transition(logic, running, turnDone(text));
    expect(policies.value).toEqual({ running: 'runningPostLoopPolicies' });
    const [ended] = transition(logic, policies, STOP);
    expect(ended.status).toBe('done');
    expect(ended.output).toMatchObject(STOPPED);
  });
});

describe('master: counting and acknowledging', () => {
  it('each fresh turn counts its model call: 1 for the first turn, 2 once the next turn starts', () => {
    const { logic, running } = started(session({ maxTurns: 3 }));
    expect(running.context.counts).toMatchObject({ modelCalls: 1, attemptsOnModel: 1, turnsThisRun: 0 });
    const tools = outcomeOf(running.context, (output) => output.kind === 'success' && output.toolResults.length > 0);
    const [next] = transition(logic, running, turnDone(tools));
    expect(next.value).toEqual({ running: 'turn' });
    expect(next.context.counts).toMatchObject({ modelCalls: 2, attemptsOnModel: 1, turnsThisRun: 1 });
  });

  it('a steer or a follow-up taken outside a turn (during post-loop policies) is acknowledged to the runtime', () => {
    const { logic, running } = started(session({ postLoopPolicies: true }));
    const text = outcomeOf(running.context, (output) => output.kind === 'success' && output.toolResults.length === 0);
    const [policies] = transition(logic, running, turnDone(text));
    expect(policies.value).toEqual({ running: 'runningPostLoopPolicies' });
    const [steered, steerActions] = transition(logic, policies, STEER);
    // (The queue updates are assignments, applied to the context, not returned as actions.)
    expect(steerActions.map((action) => action.type)).toEqual(['acknowledgeQueued']);
    expect(steered.context.steeringQueue).toEqual([STEER.message]);
    const followUp = { type: 'FOLLOW_UP', message: { role: 'user', content: 'later' } } as const;
    const [followed, followActions] = transition(logic, steered, followUp);
    expect(followActions.map((action) => action.type)).toEqual(['acknowledgeQueued']);
    expect(followed.context.followUpQueue).toEqual([followUp.message]);
  });
});
