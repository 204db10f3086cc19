import { and, assign, fromPromise, not, sendTo, setup } from 'xstate';
import type { Message } from '../src/domain/messages.js';
import { toolCallsOf } from '../src/domain/messages.js';
import type { MasterContext, MasterEvent, MasterInput, MasterOutput, QueueMode } from './master.types.js';
import { turnMachine } from './turn.machine.js';
import type { TurnOutput } from './turn.types.js';

/**
 * The session: idle → running { preTurn → turn → deciding } → backoff | overflowRecovery |
 * modelFallback → … → ended.
 *
 * The master owns the turn index, the steering and follow-up queues, pending messages, every
 * retry (the turn never retries), model fallback, overflow recovery, max turns, report-mode
 * acceptance, post-loop policies and the end reasons. Delays run on XState's clock.
 */

const notProvided = (name: string) => () => {
  throw new Error(`agentchart: the runtime must provide the master machine's "${name}"`);
};

function take(queue: Message[], mode: QueueMode): { taken: Message[]; rest: Message[] } {
  if (queue.length === 0) return { taken: [], rest: queue };
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

const outcomeOf = (context: MasterContext): TurnOutput => {
  if (!context.lastOutcome) throw new Error('agentchart: the master decided without a turn outcome');
  return context.lastOutcome;
};

/**
 * One budget: model calls ≤ maxTurns × maxAttempts. A recovery (retry, fallback, overflow re-run)
 * may use a call only if every turn the run may still start keeps one call for itself.
 */
const withinCallBudget = (context: MasterContext) =>
  !Number.isFinite(context.maxTurns) ||
  context.modelCalls + (context.maxTurns - context.turnsThisRun - 1) < context.maxTurns * context.maxAttempts;

export const masterMachine = setup({
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
    /** Transforms the context with `overflow: true` and announces `contextCompacted`. */
    recoverFromOverflow: fromPromise<{ recovered: boolean }, { turnIndex: number }>(notProvided('recoverFromOverflow')),
  },
  guards: {
    turnWasAborted: ({ context }) => outcomeOf(context).kind === 'aborted',
    policyStoppedSession: ({ context }) => outcomeOf(context).kind === 'finished',
    /** The turn announced turnStart (a pre-turn Stop ends the session before any). */
    turnWasAnnounced: ({ context }) => outcomeOf(context).turnEndReason !== null,
    contextOverflowed: ({ context }) => outcomeOf(context).detail === 'overflow',
    retryableErrorWithAttemptsLeft: ({ context }) => {
      const outcome = outcomeOf(context);
      return outcome.detail === 'retryable' && outcome.error?.retryable === true && context.attemptsOnModel < context.maxAttempts && withinCallBudget(context);
    },
    fallbackModelLeft: ({ context }) => outcomeOf(context).detail === 'retryable' && context.modelIndex + 1 < context.modelCount,
    turnFailed: ({ context }) => outcomeOf(context).kind === 'failure',
    failedWithRetryableError: ({ context }) => outcomeOf(context).error?.retryable === true,
    /** Max turns: another turn would start, but the run has used all it may start. */
    turnBudgetSpent: ({ context }) => context.turnsThisRun >= context.maxTurns,
    /** Max turns, checked while deciding (before this turn is counted): may one more turn start? */
    anotherTurnAllowed: ({ context }) => context.turnsThisRun + 1 < context.maxTurns,
    turnRanTools: ({ context }) => {
      const assistant = outcomeOf(context).assistant;
      return assistant !== null && toolCallsOf(assistant).length > 0;
    },
    hasPendingMessages: ({ context }) => context.pending.length > 0 || context.steeringQueue.length > 0,
    hasFollowUps: ({ context }) => context.followUpQueue.length > 0,
    hasPostLoopPolicies: ({ context }) => context.postLoopPolicies,
    isReportMode: ({ context }) => context.reportToolName !== null,
    /** Report mode: the report tool ran with valid arguments and its result was committed. */
    finalReportAccepted: ({ context }) => {
      const outcome = outcomeOf(context);
      return outcome.toolResults.some(
        (result) => result.toolName === context.reportToolName && !result.isError && outcome.startedCallIds.includes(result.toolCallId),
      );
    },
    /** Report mode: at least one known, valid, non-progress tool ran in the turn (a failing one counts). */
    turnDidWork: ({ context }) => {
      const outcome = outcomeOf(context);
      return outcome.toolResults.some(
        (result) => outcome.startedCallIds.includes(result.toolCallId) && !context.progressToolNames.includes(result.toolName),
      );
    },
    failedTurnRetryLeft: ({ context }) => context.failedTurnRetries + 1 < context.maxAttempts && withinCallBudget(context),
    turnIsOpen: ({ context }) => context.turnOpen,
    abortWasRequested: ({ context }) => context.abortRequested,
    resumesInsideTurn: ({ context }) => context.resume?.at === 'turn',
    resumesBeforeTurn: ({ context }) => context.resume?.at === 'preTurn',
  },
  actions: {
    announceAgentStart: notProvided('announceAgentStart'),
    announceAgentEnd: notProvided('announceAgentEnd'),
    announceRetry: notProvided('announceRetry'),
    announceModelFallback: notProvided('announceModelFallback'),
    /** Closes a turn left open by a deferred failure: an aborted message and turnEnd(aborted). */
    closeOpenTurnAsAborted: notProvided('closeOpenTurnAsAborted'),
    /** After an internal error: commits the turn's input and published reply (with results), closes the turn. */
    closeTurnAfterInternalError: notProvided('closeTurnAfterInternalError'),
    recordInternalError: assign({
      error: ({ event }) => ({
        kind: 'internal' as const,
        message: `internal error: ${describeError('error' in event ? event.error : event)}`,
        retryable: false,
      }),
    }),
    /** Report mode: counts a turn that ran no tool and sent no report as failed. */
    countFailedReportTurn: notProvided('countFailedReportTurn'),
    /** Report mode: removes the reply of a turn that did no work from history and announces the retry. */
    discardFailedReportTurn: notProvided('discardFailedReportTurn'),
    /** Report mode: one guidance message for the re-run of a turn that did no work. */
    queueReportGuidance: assign({}),
    /** Computes `retryDelayMs`: exponential, capped, jittered; a retry-after wins (clamped). */
    planRetry: assign({}),
    forwardAbortToTurn: sendTo('turn', { type: 'ABORT' }),
    recordAbortRequest: assign({ abortRequested: true }),
    /** Tells the runtime the master took a steering/follow-up message (it is in the master's queue now). */
    acknowledgeQueued: notProvided('acknowledgeQueued'),
    forwardSteeringToTurn: sendTo('turn', { type: 'STEERING_ARRIVED' }),
    queueSteering: assign({
      steeringQueue: ({ context, event }) => (event.type === 'STEER' ? [...context.steeringQueue, event.message] : context.steeringQueue),
    }),
    queueFollowUp: assign({
      followUpQueue: ({ context, event }) => (event.type === 'FOLLOW_UP' ? [...context.followUpQueue, event.message] : context.followUpQueue),
    }),
    takeNextTurnInput: assign(({ context }) => {
      const steering = take(context.steeringQueue, context.steeringMode);
      return { turnInput: [...context.pending, ...steering.taken], pending: [], steeringQueue: steering.rest };
    }),
    takeFollowUps: assign(({ context }) => {
      const followUps = take(context.followUpQueue, context.followUpMode);
      return { pending: [...context.pending, ...followUps.taken], followUpQueue: followUps.rest };
    }),
    startFreshTurn: assign({
      attempt: 'fresh',
      attemptsOnModel: 0,
      overflowUsedThisTurn: false,
      failedTurnRetries: 0,
      steeredThisTurn: false,
    }),
    noteSteeringForTurn: assign({ steeredThisTurn: true }),
    recordOutcome: assign(({ context }, params: { outcome: TurnOutput }) => {
      const output = params.outcome;
      const deferred = output.kind === 'failure' && (output.detail === 'retryable' || output.detail === 'overflow');
      return { lastOutcome: output, pending: [...context.pending, ...output.injected], turnOpen: deferred };
    }),
    advanceTurn: assign(({ context }) => ({ turnIndex: context.turnIndex + 1, turnsThisRun: context.turnsThisRun + 1 })),
    countModelCall: assign(({ context }) => ({ modelCalls: context.modelCalls + 1, attemptsOnModel: context.attemptsOnModel + 1 })),
    useOverflowAllowance: assign({ overflowUsedThisTurn: true, attempt: 'overflowRetry' }),
    switchToFallbackModel: assign(({ context }) => ({ modelIndex: context.modelIndex + 1, attemptsOnModel: 0, attempt: 'retry' as const })),
    retrySameTurn: assign({ attempt: 'retry' }),
    retryFailedTurn: assign(({ context }) => ({
      attempt: 'fresh' as const,
      attemptsOnModel: 0,
      overflowUsedThisTurn: false,
      steeredThisTurn: false,
      failedTurnRetries: context.failedTurnRetries + 1,
    })),
    injectPostLoopMessages: assign({ pending: ({ context }, params: { messages: Message[] }) => [...context.pending, ...params.messages] }),
    endAs: assign((_, params: Pick<MasterContext, 'status' | 'endReason'>) => params),
    recordError: assign({ error: ({ context }) => outcomeOf(context).error }),
  },
  delays: {
    retryDelay: ({ context }) => context.retryDelayMs,
  },
}).createMachine({
  id: 'master',
  context: ({ input }) => ({
    ...input,
    pending: input.newMessages,
    turnInput: [],
    turnsThisRun: input.turnsThisRun ?? 0,
    modelCalls: 0,
    modelIndex: input.modelIndex ?? 0,
    attemptsOnModel: 0,
    overflowUsedThisTurn: false,
    failedTurnRetries: 0,
    attempt: 'fresh',
    lastOutcome: null,
    retryDelayMs: 0,
    status: 'completed',
    endReason: 'naturalEnd',
    error: null,
    turnOpen: false,
    abortRequested: false,
    steeredThisTurn: false,
  }),
  initial: 'idle',
  states: {
    idle: {
      on: {
        START: { target: 'running', actions: 'announceAgentStart' },
        // After a restart the run continues where its last checkpoint left it (no second agentStart).
        RESUME: [
          { guard: 'resumesInsideTurn', target: 'running.turn', actions: assign({ attempt: 'resumed' }) },
          { guard: 'resumesBeforeTurn', target: 'running.preTurn' },
          { target: 'running.postLoop' },
        ],
      },
    },
    running: {
      initial: 'preTurn',
      on: {
        // A steer during a backoff or an overflow recovery takes effect at the turn's next decision.
        STEER: { actions: ['queueSteering', 'acknowledgeQueued', 'noteSteeringForTurn'] },
        FOLLOW_UP: { actions: ['queueFollowUp', 'acknowledgeQueued'] },
        ABORT: { target: 'ended', actions: { type: 'endAs', params: { status: 'aborted', endReason: 'aborted' } } },
      },
      states: {
        /**
         * Builds the next turn's input batch: pending messages plus steering (per the steering mode).
         * Max turns is checked first, so a queued steering message stays queued.
         */
        preTurn: {
          always: [
            { guard: 'turnBudgetSpent', target: '#master.ended', actions: { type: 'endAs', params: { status: 'failed', endReason: 'maxTurns' } } },
            { target: 'turn', actions: ['takeNextTurnInput', 'startFreshTurn'] },
          ],
        },
        turn: {
          entry: 'countModelCall',
          invoke: {
            id: 'turn',
            src: 'turn',
            input: ({ context }) => ({
              turnIndex: context.turnIndex,
              features: context.turnFeatures,
              newMessages: context.attempt === 'fresh' ? context.turnInput : [],
              attempt: context.attempt,
              resume: context.attempt === 'resumed' && context.resume?.at === 'turn' ? context.resume.turn : null,
              retryAvailable: context.attemptsOnModel < context.maxAttempts && withinCallBudget(context),
              fallbackAvailable: context.modelIndex + 1 < context.modelCount && withinCallBudget(context),
              overflowRecoveryAvailable: !context.overflowUsedThisTurn && withinCallBudget(context),
              steeringArrived: context.steeredThisTurn,
            }),
            onDone: {
              target: 'deciding',
              actions: [assign({ turnInput: [], resume: null }), { type: 'recordOutcome', params: ({ event }) => ({ outcome: event.output }) }],
            },
            // A throw inside an effect or an action of the turn ends the session as an internal error,
            // never at the expense of the log: the runtime commits the turn's input and the published
            // reply with one result per call, and closes the turn.
            onError: {
              target: '#master.ended',
              actions: [
                'closeTurnAfterInternalError',
                'recordInternalError',
                { type: 'endAs', params: { status: 'failed', endReason: 'fatalError' } },
              ],
            },
          },
          on: {
            STEER: { actions: ['queueSteering', 'acknowledgeQueued', 'noteSteeringForTurn', 'forwardSteeringToTurn'] },
            // The turn ends itself inline on abort (its own recipe per state); the master then ends.
            // A turn finishing in the same step may never see it: the master remembers the abort too.
            ABORT: { actions: ['forwardAbortToTurn', 'recordAbortRequest'] },
          },
        },
        deciding: {
          always: [
            {
              guard: and(['abortWasRequested', 'turnIsOpen']),
              target: '#master.ended',
              actions: ['closeOpenTurnAsAborted', 'advanceTurn', { type: 'endAs', params: { status: 'aborted', endReason: 'aborted' } }],
            },
            {
              guard: and(['abortWasRequested', 'turnWasAnnounced']),
              target: '#master.ended',
              actions: ['advanceTurn', { type: 'endAs', params: { status: 'aborted', endReason: 'aborted' } }],
            },
            { guard: 'abortWasRequested', target: '#master.ended', actions: { type: 'endAs', params: { status: 'aborted', endReason: 'aborted' } } },
            { guard: 'turnWasAborted', target: '#master.ended', actions: ['advanceTurn', { type: 'endAs', params: { status: 'aborted', endReason: 'aborted' } }] },
            {
              guard: and(['policyStoppedSession', 'turnWasAnnounced']),
              target: '#master.ended',
              actions: ['advanceTurn', { type: 'endAs', params: { status: 'completed', endReason: 'policyStop' } }],
            },
            { guard: 'policyStoppedSession', target: '#master.ended', actions: [{ type: 'endAs', params: { status: 'completed', endReason: 'policyStop' } }] },
            { guard: 'contextOverflowed', target: 'overflowRecovery', actions: 'useOverflowAllowance' },
            { guard: 'retryableErrorWithAttemptsLeft', target: 'backoff', actions: ['planRetry', 'retrySameTurn'] },
            { guard: 'fallbackModelLeft', target: 'modelFallback' },
            {
              guard: and(['turnFailed', 'failedWithRetryableError']),
              target: '#master.ended',
              actions: ['advanceTurn', 'recordError', { type: 'endAs', params: { status: 'failed', endReason: 'retryExhausted' } }],
            },
            {
              guard: 'turnFailed',
              target: '#master.ended',
              actions: ['advanceTurn', 'recordError', { type: 'endAs', params: { status: 'failed', endReason: 'fatalError' } }],
            },
            // Report mode: a final report ends the session; a turn with no work is retried with guidance.
            {
              guard: and(['isReportMode', 'finalReportAccepted']),
              target: '#master.ended',
              actions: ['advanceTurn', { type: 'endAs', params: { status: 'completed', endReason: 'finalReport' } }],
            },
            {
              guard: and(['isReportMode', not('turnDidWork'), 'failedTurnRetryLeft', 'anotherTurnAllowed']),
              target: 'turn',
              actions: ['advanceTurn', 'countFailedReportTurn', 'discardFailedReportTurn', 'queueReportGuidance', 'takeNextTurnInput', 'retryFailedTurn'],
            },
            {
              guard: and(['isReportMode', not('turnDidWork'), 'failedTurnRetryLeft']),
              target: '#master.ended',
              actions: ['advanceTurn', 'countFailedReportTurn', { type: 'endAs', params: { status: 'failed', endReason: 'maxTurns' } }],
            },
            {
              guard: and(['isReportMode', not('turnDidWork')]),
              target: '#master.ended',
              actions: ['advanceTurn', 'countFailedReportTurn', { type: 'endAs', params: { status: 'failed', endReason: 'retryExhausted' } }],
            },
            { guard: 'turnRanTools', target: 'preTurn', actions: 'advanceTurn' },
            // A text-only turn does not end the inner loop while messages are pending.
            { guard: 'hasPendingMessages', target: 'preTurn', actions: 'advanceTurn' },
            { target: 'postLoop', actions: 'advanceTurn' },
          ],
        },
        /** Waits `retryDelayMs` on the XState clock, then re-runs the same turn. */
        backoff: {
          entry: 'announceRetry',
          after: { retryDelay: { target: 'turn' } },
          on: {
            ABORT: {
              target: '#master.ended',
              actions: ['closeOpenTurnAsAborted', 'advanceTurn', { type: 'endAs', params: { status: 'aborted', endReason: 'aborted' } }],
            },
          },
        },
        /** Transforms the context with overflow=true once per turn, then re-runs the same turn. */
        overflowRecovery: {
          invoke: {
            src: 'recoverFromOverflow',
            input: ({ context }) => ({ turnIndex: context.turnIndex }),
            onDone: { target: 'turn' },
          },
          on: {
            ABORT: {
              target: '#master.ended',
              actions: ['closeOpenTurnAsAborted', 'advanceTurn', { type: 'endAs', params: { status: 'aborted', endReason: 'aborted' } }],
            },
          },
        },
        modelFallback: {
          entry: ['switchToFallbackModel', 'announceModelFallback'],
          always: 'turn',
        },
        /** Post-loop policies run once per outer iteration; follow-ups are polled only after them. */
        postLoop: {
          always: [{ guard: not('hasPostLoopPolicies'), target: 'pollingFollowUps' }, { target: 'runningPostLoopPolicies' }],
        },
        runningPostLoopPolicies: {
          invoke: {
            src: 'runPostLoopPolicies',
            input: ({ context }) => ({ turnIndex: context.turnIndex }),
            onDone: [
              {
                guard: ({ event }) => event.output.stopped,
                target: '#master.ended',
                actions: { type: 'endAs', params: { status: 'completed', endReason: 'policyStop' } },
              },
              {
                guard: ({ event }) => event.output.injected.length > 0,
                target: 'preTurn',
                actions: { type: 'injectPostLoopMessages', params: ({ event }) => ({ messages: event.output.injected }) },
              },
              { target: 'pollingFollowUps' },
            ],
          },
        },
        pollingFollowUps: {
          always: [
            // At max turns a queued follow-up stays queued (never taken and dropped).
            { guard: and(['hasFollowUps', 'turnBudgetSpent']), target: '#master.ended', actions: { type: 'endAs', params: { status: 'failed', endReason: 'maxTurns' } } },
            { guard: 'hasFollowUps', target: 'preTurn', actions: 'takeFollowUps' },
            { guard: 'isReportMode', target: '#master.ended', actions: { type: 'endAs', params: { status: 'failed', endReason: 'retryExhausted' } } },
            { target: '#master.ended', actions: { type: 'endAs', params: { status: 'completed', endReason: 'naturalEnd' } } },
          ],
        },
      },
    },
    ended: {
      type: 'final',
      entry: 'announceAgentEnd',
    },
  },
  output: ({ context }) => ({
    status: context.status,
    endReason: context.endReason,
    error: context.error,
    steeringQueue: context.steeringQueue,
    followUpQueue: context.followUpQueue,
    turnIndex: context.turnIndex,
    modelIndex: context.modelIndex,
  }),
});
