import type { MasterInput, MasterOutput } from '../../machines/master.types.js';
import type { TurnOutput } from '../../machines/turn.types.js';
import type { Effect } from './harness/explore.js';
import type { Checks, Monitor } from './harness/paths.js';
import {
  STOP_ERROR,
  currentTurnInput,
  turnInvocationOf,
  type MasterEnv,
  type MasterLogic,
  type MasterWalk,
} from './master-model.js';

/**
 * Session-level invariants, checked at every step of every path and at its end. The turn's own
 * lifecycle (one turnStart per fresh attempt, turnEnd when it closes) is proven by the turn
 * checks; here the master must call it so that every turn that opens is closed exactly once.
 */

interface Observed {
  agentStarts: number;
  agentEnds: number;
  /** The index of the turn that announced turnStart and has not ended yet. */
  openTurn: number | null;
  /** Turn indices that got a fresh attempt (a turnStart). */
  startedTurns: readonly number[];
  /** User messages handed to a fresh turn as its input batch. */
  delivered: readonly string[];
  /** User messages sent with STEER / FOLLOW_UP. */
  sent: readonly string[];
  abortSent: boolean;
  stopSent: boolean;
  /** STEER arrived since the current turn's fresh attempt started: its re-runs must be told. */
  steeredSinceFreshTurn: boolean;
}

const END_REASONS: Record<string, readonly string[]> = {
  completed: ['naturalEnd', 'finalReport', 'policyStop'],
  failed: ['maxTurns', 'retryExhausted', 'fatalError'],
  aborted: ['aborted'],
};

const count = (effects: readonly Effect[], action: string) =>
  effects.filter((effect) => effect.action === action).length;
const userText = (message: { role: string; content?: unknown }) =>
  message.role === 'user' && typeof message.content === 'string' ? message.content : null;

export function masterMonitor(input: MasterInput): Monitor<MasterLogic, MasterEnv, Observed> {
  const callBudget = input.config.maxTurns * input.config.maxAttempts;

  const observe = (
    observed: Observed,
    from: MasterWalk | null,
    label: string,
    effects: readonly Effect[],
    to: MasterWalk,
    checks: Checks,
  ): Observed => {
    let next: Observed = {
      ...observed,
      agentStarts: observed.agentStarts + count(effects, 'announceAgentStart'),
      agentEnds: observed.agentEnds + count(effects, 'announceAgentEnd'),
      abortSent: observed.abortSent || label === 'ABORT',
      stopSent: observed.stopSent || label === 'STOP',
      steeredSinceFreshTurn: observed.steeredSinceFreshTurn || label === 'STEER',
    };
    checks.that(
      'agentStart exactly once, before anything else',
      next.agentStarts === (to.snapshot.matches('idle') ? 0 : 1),
    );
    checks.that(
      'agentEnd at most once, only when the session ended',
      next.agentEnds === (to.snapshot.matches('ended') ? 1 : 0),
      () => `${next.agentEnds} in ${JSON.stringify(to.snapshot.value)}`,
    );
    checks.that(
      `the model is one of the ${input.config.modelCount} configured`,
      to.snapshot.context.modelIndex < input.config.modelCount,
      () => `model index ${to.snapshot.context.modelIndex}`,
    );
    const { modelCalls } = to.snapshot.context.counts;
    checks.that(
      `model calls ≤ maxTurns × maxAttempts (${callBudget})`,
      modelCalls <= callBudget,
      () => `${modelCalls} calls`,
    );

    if (label === 'STEER' || label === 'FOLLOW_UP') {
      const queue = label === 'STEER' ? to.snapshot.context.steeringQueue : to.snapshot.context.followUpQueue;
      const text = userText(queue[queue.length - 1] ?? { role: '' });
      if (text) next = { ...next, sent: [...next.sent, text] };
    }

    // The turn that was running ended: it closed, unless it deferred to the master (still open).
    if (label.startsWith('turn:')) {
      const output: TurnOutput | null = to.snapshot.context.lastOutcome;
      const deferred = output?.kind === 'failure' && (output.detail === 'retryable' || output.detail === 'overflow');
      next = { ...next, openTurn: deferred ? next.openTurn : null };
    }

    // A new turn attempt started in this step.
    const turnInput = currentTurnInput(to);
    const invoked = turnInput && (!from || turnInvocationOf(from) !== turnInvocationOf(to));
    if (turnInput && invoked) {
      if (turnInput.attempt === 'fresh') {
        checks.that('a fresh turn starts without steering pending for it', turnInput.steeringArrived === false);
        next = { ...next, steeredSinceFreshTurn: false };
        checks.that(
          'a fresh turn starts only when no turn is open',
          next.openTurn === null,
          () => `turn ${String(next.openTurn)} is still open`,
        );
        checks.that(
          'no second turnStart for one turn',
          !next.startedTurns.includes(turnInput.turnIndex),
          () => `turn ${turnInput.turnIndex} started twice`,
        );
        const texts = turnInput.newMessages.map(userText).filter((text): text is string => text !== null);
        next = {
          ...next,
          openTurn: turnInput.turnIndex,
          startedTurns: [...next.startedTurns, turnInput.turnIndex],
          delivered: [...next.delivered, ...texts],
        };
      } else {
        checks.that(
          'a re-run continues the open turn',
          next.openTurn === turnInput.turnIndex,
          () => `re-run of turn ${turnInput.turnIndex}, open: ${String(next.openTurn)}`,
        );
        checks.that(
          'a re-run is told of steering accepted since its turn started (during a backoff, an overflow recovery, the failed attempt)',
          turnInput.steeringArrived === next.steeredSinceFreshTurn,
          () => `steeringArrived ${String(turnInput.steeringArrived)}, steered ${String(next.steeredSinceFreshTurn)}`,
        );
      }
    }
    return next;
  };

  return {
    start: (walk, effects, checks) =>
      observe(
        {
          agentStarts: 0,
          agentEnds: 0,
          openTurn: null,
          startedTurns: [],
          delivered: [],
          sent: [],
          abortSent: false,
          stopSent: false,
          steeredSinceFreshTurn: false,
        },
        null,
        '',
        effects,
        walk,
        checks,
      ),
    step: (observed, from, edge, to, checks) => observe(observed, from, edge.label, edge.effects, to, checks),
    end: (observed, last, checks) => {
      checks.that(
        'every path ends in ended',
        last.snapshot.matches('ended') && last.status === 'done',
        () => `stopped in ${JSON.stringify(last.snapshot.value)}`,
      );
      if (last.status !== 'done') return;
      const output = last.snapshot.output as MasterOutput;
      checks.that(
        'no turn is left open (every turnStart has its turnEnd)',
        observed.openTurn === null,
        () => `turn ${String(observed.openTurn)} never closed`,
      );
      checks.that(
        'the end reason matches the status',
        END_REASONS[output.status]?.includes(output.endReason) === true,
        () => `${output.status} / ${output.endReason}`,
      );
      checks.that(
        "STOP ⇔ the session ends failed / fatalError with the runtime's error",
        observed.stopSent === (output.by === 'runtime') &&
          (output.by === 'chart' ||
            (output.status === 'failed' && output.endReason === 'fatalError' && output.error === STOP_ERROR)),
        () => `stop sent: ${observed.stopSent}, ended ${JSON.stringify(output)}`,
      );
      checks.that(
        'ABORT (and no STOP) ⇔ the session ends aborted',
        (observed.abortSent && !observed.stopSent) === (output.status === 'aborted'),
        () => `abort sent: ${observed.abortSent}, ended ${output.status}/${output.endReason}`,
      );
      checks.that(
        `fresh turns ≤ maxTurns (${input.config.maxTurns})`,
        observed.startedTurns.length <= input.config.maxTurns,
        () => `${observed.startedTurns.length} turns`,
      );
      const queued = [...output.steeringQueue, ...output.followUpQueue].map(userText);
      for (const text of observed.sent) {
        const times =
          observed.delivered.filter((item) => item === text).length + queued.filter((item) => item === text).length;
        checks.that(
          'a steering / follow-up message is delivered once or still queued (never lost)',
          times === 1,
          () => `"${text}" delivered or queued ${times} times`,
        );
      }
    },
  };
}
