import { assertEvent, assign, fromPromise, sendTo, setup } from 'xstate';
import type { Message } from '../src/domain/messages.js';
import type {
  MasterContext,
  MasterEvent,
  MasterInput,
  MasterOutput,
  QueueMode,
  RunEnd,
  TurnProgress,
} from './master.types.js';
import { turnMachine } from './turn.machine.js';
import type { TurnInput, TurnOutput } from './turn.types.js';

/**
 * The master machine's vocabulary: the named actors, guards and actions the chart in
 * master.machine.ts uses. Guards are pure; effects are placeholders `src/runtime` provides.
 */

/** A turn no attempt of which has run yet. */
export const FRESH_TURN: TurnProgress = { attempt: 'fresh', overflowUsed: false, steered: false, overflowView: null };

const notProvided = (name: string) => () => {
  throw new Error(`agentchart: the runtime must provide the master machine's "${name}"`);
};

function take(queue: Message[], mode: QueueMode): { taken: Message[]; rest: Message[] } {
  return mode === 'all' ? { taken: queue, rest: [] } : { taken: queue.slice(0, 1), rest: queue.slice(1) };
}

/** An error's message for the run's result (pure: no I/O, never throws). */
export function describeError(error: unknown): string {
  try {
    if (error instanceof Error) return error.message || error.name;
    return String(error);
  } catch {
    return 'unprintable error';
  }
}

/**
 * The outcome being decided on: the turn's output, from its done event. Every decision on an outcome runs in
 * the step that event starts (eventless transitions see the event of their step), before or after it is recorded.
 */
const outcomeOf = ({ event }: { event: { type: string } }): TurnOutput =>
  (event as unknown as { output: TurnOutput }).output;

/**
 * One budget: model calls ≤ maxTurns × maxAttempts. A recovery (retry, fallback, overflow re-run)
 * may use a call only if every turn the run may still start keeps one call for itself.
 */
const withinCallBudget = ({ config, counts }: MasterContext, turnsEnded = 0) =>
  !Number.isFinite(config.maxTurns) ||
  counts.modelCalls + (config.maxTurns - (counts.turnsThisRun - turnsEnded) - 1) < config.maxTurns * config.maxAttempts;

const hasFallbackModel = ({ modelIndex, config }: MasterContext) => modelIndex + 1 < config.modelCount;

/** The input of the turn attempt the master runs now. */
export function turnInputOf(context: MasterContext): TurnInput {
  const { config, turn, counts } = context;
  const budget = withinCallBudget(context);
  return {
    turnIndex: context.turnIndex,
    features: config.turnFeatures,
    // Empty but for a fresh attempt: the turn's outcome, once recorded, clears it (a re-run sends nothing new).
    newMessages: context.turnInput,
    attempt: turn.attempt,
    resume: turn.attempt === 'resumed' && context.resume?.at === 'turn' ? context.resume.turn : null,
    retryAvailable: counts.attemptsOnModel < config.maxAttempts && budget,
    fallbackAvailable: hasFallbackModel(context) && budget,
    overflowRecoveryAvailable: !turn.overflowUsed && budget,
    steeringArrived: turn.steered,
    overflowView: turn.overflowView,
    modelIndex: context.modelIndex,
  };
}

const postLoopOutput = (event: { type: string }) =>
  (event as unknown as { output: { stopped: boolean; injected: Message[] } }).output;

/** Deferred to the master: a failure it promised to recover (only a deferred failure carries these details). */
const isDeferred = (outcome: TurnOutput) => outcome.detail === 'retryable' || outcome.detail === 'overflow';

export const masterSetup = setup({
  types: {
    context: {} as MasterContext,
    events: {} as MasterEvent,
    input: {} as MasterInput,
    output: {} as MasterOutput,
  },
  actors: {
    turn: turnMachine,
    runPostLoopPolicies: fromPromise<{ stopped: boolean; injected: Message[] }, { turnIndex: number }>(
      notProvided('runPostLoopPolicies'),
    ),
    /** Transforms the context with `overflow: true` and announces `contextCompacted`; its output is the compacted view. */
    recoverFromOverflow: fromPromise<{ view: Message[] | null }, { turnIndex: number }>(
      notProvided('recoverFromOverflow'),
    ),
  },
  guards: {
    turnWasAborted: (args) => outcomeOf(args).kind === 'aborted',
    policyStoppedSession: (args) => outcomeOf(args).kind === 'finished',
    /** The turn's failure was deferred to the master (retry, fallback, overflow): it is still open. */
    turnIsOpen: (args) => isDeferred(outcomeOf(args)),
    turnFailed: (args) => outcomeOf(args).kind === 'failure',
    contextOverflowed: (args) => outcomeOf(args).detail === 'overflow',
    retryableErrorWithAttemptsLeft: (args) => {
      const outcome = outcomeOf(args);
      const { context } = args;
      return (
        outcome.detail === 'retryable' &&
        outcome.error.retryable &&
        context.counts.attemptsOnModel < context.config.maxAttempts &&
        withinCallBudget(context)
      );
    },
    fallbackModelLeft: (args) => outcomeOf(args).detail === 'retryable' && hasFallbackModel(args.context),
    failedWithRetryableError: (args) => outcomeOf(args).error?.retryable === true,
    /** Max turns: another turn would start, but the run has used all it may start. */
    turnBudgetSpent: ({ context }) => context.counts.turnsThisRun >= context.config.maxTurns,
    /** Max turns, checked where the turn's outcome arrives (before it is counted): may one more turn start? */
    // Stryker disable next-line ConditionalExpression: a shortcut; the way round through preTurn reaches the same turn
    nextTurnAllowed: ({ context }) => context.counts.turnsThisRun + 1 < context.config.maxTurns,
    /** Max turns, checked while deciding (the turn just ended is counted): may one more turn start? */
    anotherTurnAllowed: ({ context }) => context.counts.turnsThisRun < context.config.maxTurns,
    /** One result per tool call of the reply: the turn's reply asked for tools and they have their results. */
    turnRanTools: (args) => outcomeOf(args).toolResults.length > 0,
    hasPendingMessages: ({ context }) => context.pending.length > 0 || context.steeringQueue.length > 0,
    hasFollowUps: ({ context }) => context.followUpQueue.length > 0,
    hasPostLoopPolicies: ({ context }) => context.config.postLoopPolicies,
    isReportMode: ({ context }) => context.config.reportToolName !== null,
    /** Report mode: the report tool ran with valid arguments and its result was committed. */
    finalReportAccepted: (args) => {
      const outcome = outcomeOf(args);
      const name = args.context.config.reportToolName;
      return outcome.toolResults.some(
        (result) => result.toolName === name && !result.isError && outcome.startedCallIds.includes(result.toolCallId),
      );
    },
    /** Report mode: at least one known, valid, non-progress tool ran in the turn (a failing one counts). */
    turnDidWork: (args) => {
      const outcome = outcomeOf(args);
      const progress = args.context.config.progressToolNames;
      return outcome.toolResults.some(
        (result) => outcome.startedCallIds.includes(result.toolCallId) && !progress.includes(result.toolName),
      );
    },
    /** Report mode, after the failed turn was counted: may it be re-run (one call kept for every turn left)? */
    failedTurnRetryLeft: ({ context }) =>
      context.counts.failedTurnRetries + 1 < context.config.maxAttempts && withinCallBudget(context, 1),
    abortWasRequested: ({ context }) => context.abortRequested,
    /** The runtime's STOP decided the end: nothing the chart meets after it changes it. */
    runWasStopped: ({ context }) => context.end.by !== 'chart',
    postLoopPolicyStopped: ({ event }) => postLoopOutput(event).stopped,
    postLoopPolicyInjected: ({ event }) => postLoopOutput(event).injected.length > 0,
    resumesInsideTurn: ({ context }) => context.resume?.at === 'turn',
    resumesBeforeTurn: ({ context }) => context.resume?.at === 'preTurn',
  },
  actions: {
    announceAgentStart: notProvided('announceAgentStart'),
    announceAgentEnd: notProvided('announceAgentEnd'),
    announceRetry: notProvided('announceRetry'),
    announceModelFallback: notProvided('announceModelFallback'),
    /** After an internal error: commits the turn's input and published reply (with results), closes the turn. */
    closeTurnAfterInternalError: notProvided('closeTurnAfterInternalError'),
    /** Tells the runtime the master took a steering/follow-up message (it is in the master's queue now). */
    acknowledgeQueued: notProvided('acknowledgeQueued'),
    /** Report mode: counts a turn that ran no tool and sent no report as failed. */
    countFailedReportTurn: notProvided('countFailedReportTurn'),
    /** Report mode: removes the reply of a turn that did no work from history and announces the retry. */
    discardFailedReportTurn: notProvided('discardFailedReportTurn'),
    /** Report mode: one guidance message for the re-run of a turn that did no work. */
    queueReportGuidance: assign({}),
    /** Computes `retryDelayMs`: exponential, capped, jittered; a retry-after wins (clamped). */
    planRetry: assign({}),
    recordInternalError: assign({
      end: ({ event }) => ({
        by: 'chart' as const,
        status: 'failed' as const,
        endReason: 'fatalError' as const,
        error: {
          kind: 'internal' as const,
          message: `internal error: ${describeError('error' in event ? event.error : event)}`,
          retryable: false,
        },
      }),
    }),
    forwardAbortToTurn: sendTo('turn', { type: 'ABORT' }),
    forwardSteeringToTurn: sendTo('turn', { type: 'STEERING_ARRIVED' }),
    forwardDecisionToTurn: sendTo('turn', ({ event }) => event),
    recordAbortRequest: assign({ abortRequested: true }),
    /** The runtime's STOP: the run's end is decided here (failed, fatalError, the runtime's error), and it aborts. */
    recordStop: assign(({ event }) => {
      assertEvent(event, 'STOP');
      const end: RunEnd = { by: 'runtime', status: 'failed', endReason: 'fatalError', error: event.error };
      return { end, abortRequested: true };
    }),
    queueSteering: assign({
      steeringQueue: ({ context, event }) => {
        assertEvent(event, 'STEER');
        return [...context.steeringQueue, event.message];
      },
      turn: ({ context }) => (context.turn.steered ? context.turn : { ...context.turn, steered: true }),
    }),
    queueFollowUp: assign({
      followUpQueue: ({ context, event }) => {
        assertEvent(event, 'FOLLOW_UP');
        return [...context.followUpQueue, event.message];
      },
    }),
    /** The next turn's input (pending plus steering per the mode), as a fresh turn, and its model call counted. */
    startFreshTurn: assign(({ context }) => freshTurn(context)),
    /** The turn's outcome, and at once the next turn (the loop's usual way round: one step, one context copy). */
    startNextTurn: assign(({ context, event }) => {
      const recorded = outcomeRecorded(context, event);
      return { ...recorded, ...freshTurn({ ...context, ...recorded }) };
    }),
    takeFollowUps: assign(({ context }) => {
      const followUps = take(context.followUpQueue, context.config.followUpMode);
      return { pending: [...context.pending, ...followUps.taken], followUpQueue: followUps.rest };
    }),
    resumeTurn: assign(({ context }) => ({ turn: { ...context.turn, attempt: 'resumed' as const } })),
    /** The turn's outcome; a turn that ended (not deferred) advances the turn index. */
    recordOutcome: assign(({ context, event }) => outcomeRecorded(context, event)),
    /** The model call of the attempt the turn is entered for (startFreshTurn and startNextTurn count theirs). */
    countModelCall: assign(({ context }) => ({ counts: modelCallCounted(context.counts) })),
    useOverflowAllowance: assign(({ context }) => ({
      turn: { ...context.turn, overflowUsed: true, attempt: 'overflowRetry' as const },
    })),
    recordOverflowView: assign(({ context, event }) => {
      const view = (event as unknown as { output: { view: Message[] | null } }).output.view;
      return { turn: { ...context.turn, overflowView: view ?? context.turn.overflowView } };
    }),
    switchToFallbackModel: assign(({ context }) => ({
      modelIndex: context.modelIndex + 1,
      counts: { ...context.counts, attemptsOnModel: 0 },
      turn: { ...context.turn, attempt: 'retry' as const },
    })),
    retrySameTurn: assign(({ context }) => ({ turn: { ...context.turn, attempt: 'retry' as const } })),
    /** Report mode: the failed turn is run again as a new turn (no overflow allowance used, steering honoured). */
    retryFailedTurn: assign(({ context }) => {
      const steering = take(context.steeringQueue, context.config.steeringMode);
      return {
        turnInput: [...context.pending, ...steering.taken],
        pending: [],
        steeringQueue: steering.rest,
        counts: { ...context.counts, attemptsOnModel: 0, failedTurnRetries: context.counts.failedTurnRetries + 1 },
        turn: FRESH_TURN,
      };
    }),
    injectPostLoopMessages: assign({
      pending: ({ context, event }) => [
        ...context.pending,
        ...(event as unknown as { output: { injected: Message[] } }).output.injected,
      ],
    }),
    endAs: assign((_, params: Pick<RunEnd, 'status' | 'endReason'>) => ({
      end: { by: 'chart' as const, ...params, error: null },
    })),
    /** A failed turn ends the run with its model error (recovering decides in the step of the turn's done event). */
    endWithTurnError: assign((args, params: { endReason: 'retryExhausted' | 'fatalError' }) => ({
      end: {
        by: 'chart' as const,
        status: 'failed' as const,
        endReason: params.endReason,
        error: outcomeOf(args).error,
      },
    })),
  },
  delays: {
    retryDelay: ({ context }) => context.retryDelayMs,
  },
});

/** The turn's outcome recorded; a turn that ended (not deferred) advances the turn index. */
function outcomeRecorded(context: MasterContext, event: { type: string }): Partial<MasterContext> {
  const outcome = (event as unknown as { output: TurnOutput }).output;
  const closed = outcome.turnEndReason !== null;
  return {
    lastOutcome: outcome,
    pending: [...context.pending, ...outcome.injected],
    turnInput: [],
    resume: null,
    ...(closed ? advanced(context) : {}),
  };
}

/** A fresh turn: its input batch (pending messages plus steering, per the mode), its first attempt's model call counted. */
function freshTurn(context: MasterContext): Partial<MasterContext> {
  const steering = take(context.steeringQueue, context.config.steeringMode);
  const { counts } = context;
  return {
    turnInput: [...context.pending, ...steering.taken],
    pending: [],
    steeringQueue: steering.rest,
    counts: { ...counts, modelCalls: counts.modelCalls + 1, attemptsOnModel: 1, failedTurnRetries: 0 },
    turn: FRESH_TURN,
  };
}

function modelCallCounted(counts: MasterContext['counts']): MasterContext['counts'] {
  return { ...counts, modelCalls: counts.modelCalls + 1, attemptsOnModel: counts.attemptsOnModel + 1 };
}

function advanced(context: MasterContext): Pick<MasterContext, 'turnIndex' | 'counts'> {
  return {
    turnIndex: context.turnIndex + 1,
    counts: { ...context.counts, turnsThisRun: context.counts.turnsThisRun + 1 },
  };
}
