import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { turnInputOf } from '../../machines/master.machine.js';
import type { MasterInput, MasterResume } from '../../machines/master.types.js';
import type { TurnResume } from '../../machines/turn.types.js';
import { provideMaster, session } from './master-model.js';
import { PROMPT } from './turn-fixtures.js';

/**
 * RESUME after a restart, step by step on the master's real transitions (the exploration starts
 * sessions with START only): where the run continues and what the resumed turn is told.
 */

const TURN_RESUME: TurnResume = {
  reply: null,
  results: new Map(),
  notRerun: new Map(),
  startedCallIds: [],
  approvedCallIds: [],
  approvedArguments: {},
  requestedCallIds: [],
  committed: false,
};

const resumed = (resume: MasterResume, changes: Partial<MasterInput> = {}): MasterInput => ({
  ...session({ maxTurns: 3, maxAttempts: 2 }),
  newMessages: [],
  resume,
  turnsThisRun: 1,
  modelIndex: 0,
  ...changes,
});

function resume(input: MasterInput) {
  const logic = provideMaster();
  const [initial] = initialTransition(logic, input);
  const [next] = transition(logic, initial, { type: 'RESUME' });
  return next;
}

describe('master: RESUME continues where the checkpoint left the run', () => {
  it('inside a turn: the turn runs as a resumed attempt with its resume data, no input, and the allowances of a new turn', () => {
    const next = resume(resumed({ at: 'turn', turn: TURN_RESUME }));
    expect(next.value).toEqual({ running: 'turn' });
    expect(next.context.turn).toEqual({ attempt: 'resumed', overflowUsed: false, steered: false, overflowView: null });
    const input = turnInputOf(next.context);
    expect(input).toMatchObject({
      attempt: 'resumed',
      resume: TURN_RESUME,
      newMessages: [],
      overflowRecoveryAvailable: true,
      steeringArrived: false,
      overflowView: null,
      retryAvailable: true,
    });
    // The resumed turn is the run's second: it counts one model call, the run keeps its turn count.
    expect(next.context.counts).toEqual({ turnsThisRun: 1, modelCalls: 1, attemptsOnModel: 1, failedTurnRetries: 0 });
  });

  it('before a turn: the next turn starts fresh with the pending messages and the queued steering', () => {
    const steer = { role: 'user' as const, content: 'steer' };
    const next = resume(resumed({ at: 'preTurn' }, { newMessages: [PROMPT], steeringQueue: [steer] }));
    expect(next.value).toEqual({ running: 'turn' });
    expect(next.context.turnInput).toEqual([PROMPT, steer]);
    const input = turnInputOf(next.context);
    expect(input).toMatchObject({ attempt: 'fresh', resume: null, newMessages: [PROMPT, steer] });
  });

  it('after the loop: post-loop policies run again when configured, else follow-ups are polled and the run ends', () => {
    const withPolicies = resume(
      resumed({ at: 'postLoop' }, { config: { ...session().config, postLoopPolicies: true } }),
    );
    expect(withPolicies.value).toEqual({ running: 'runningPostLoopPolicies' });
    const without = resume(resumed({ at: 'postLoop' }));
    expect(without.status).toBe('done');
    expect(without.output).toMatchObject({ status: 'completed', endReason: 'naturalEnd', error: null });
  });

  it('RESUME without a position (nothing was left running): follow-ups are polled and the run ends', () => {
    const next = resume({ ...resumed({ at: 'preTurn' }), resume: null });
    expect(next.output).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
  });

  it('a fresh attempt never carries resume data, nor does a resumed one without a turn to resume', () => {
    const next = resume(resumed({ at: 'turn', turn: TURN_RESUME }));
    expect(turnInputOf({ ...next.context, turn: { ...next.context.turn, attempt: 'fresh' } }).resume).toBeNull();
    expect(turnInputOf({ ...next.context, resume: { at: 'preTurn' } }).resume).toBeNull();
    expect(turnInputOf({ ...next.context, resume: null }).resume).toBeNull();
  });
});
