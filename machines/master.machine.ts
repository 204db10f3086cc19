import { and } from 'xstate';
import type { RunEnd } from './master.types.js';
import { FRESH_TURN, masterSetup, turnInputOf } from './master.setup.js';

export { describeError, turnInputOf } from './master.setup.js';

/**
 * The session: idle → running { preTurn → turn → (stopping | recovering | judgingReport |
 * continuing) } → backoff | overflowRecovery | another turn | postLoop … → ended.
 *
 * The master owns the turn index, the steering and follow-up queues, pending messages, every
 * retry (the turn never retries), model fallback, overflow recovery, max turns, report-mode
 * acceptance, post-loop policies and the end reasons. A turn left open by a deferred failure is
 * closed by the turn machine itself (attempt `closing`). Delays run on XState's clock.
 */

const end = (status: RunEnd['status'], endReason: RunEnd['endReason']) =>
  ({ type: 'endAs', params: { status, endReason } }) as const;
const ABORTED = end('aborted', 'aborted');
const endWithTurnError = (endReason: 'retryExhausted' | 'fatalError') =>
  ({ type: 'endWithTurnError', params: { endReason } }) as const;
/** A throw inside the turn: its log is kept; the run ends as an internal error, unless a STOP decided the end. */
const INTERNAL_ERROR = [
  { guard: 'runWasStopped', target: '#master.ended', actions: 'closeTurnAfterInternalError' },
  { target: '#master.ended', actions: ['closeTurnAfterInternalError', 'recordInternalError'] },
] as const;

export const masterMachine = masterSetup.createMachine({
  id: 'master',
  context: ({ input }) => ({
    config: input.config,
    resume: input.resume,
    pending: input.newMessages,
    turnInput: [],
    steeringQueue: input.steeringQueue,
    followUpQueue: input.followUpQueue,
    turnIndex: input.turnIndex,
    modelIndex: input.modelIndex ?? 0,
    counts: {
      turnsThisRun: input.turnsThisRun ?? 0,
      modelCalls: input.modelCalls ?? 0,
      attemptsOnModel: input.attemptsOnModel ?? 0,
      failedTurnRetries: 0,
    },
    turn: FRESH_TURN,
    lastOutcome: null,
    retryDelayMs: 0,
    abortRequested: false,
    // Every way into `ended` assigns the status and the reason: these two are never read.
    end: {
      by: 'chart',
      // Stryker disable next-line StringLiteral: never read (see above)
      status: 'completed',
      // Stryker disable next-line StringLiteral: never read (see above)
      endReason: 'naturalEnd',
      error: null,
    },
  }),
  initial: 'idle',
  states: {
    idle: {
      on: {
        START: { target: 'running', actions: 'announceAgentStart' },
        // After a restart the run continues where its last checkpoint left it (no second agentStart).
        RESUME: [
          { guard: 'resumesInsideTurn', target: 'running.turn', actions: ['resumeTurn', 'countModelCall'] },
          { guard: 'resumesBeforeTurn', target: 'running.preTurn' },
          { guard: 'hasPostLoopPolicies', target: 'running.runningPostLoopPolicies' },
          { target: 'running.pollingFollowUps' },
        ],
      },
    },
    running: {
      initial: 'preTurn',
      on: {
        // A steer during a backoff or an overflow recovery takes effect at the turn's next decision.
        STEER: { actions: ['queueSteering', 'acknowledgeQueued'] },
        FOLLOW_UP: { actions: ['queueFollowUp', 'acknowledgeQueued'] },
        ABORT: { target: 'ended', actions: ABORTED },
        STOP: { target: 'ended', actions: 'recordStop' },
      },
      states: {
        /**
         * Builds the next turn's input batch: pending messages plus steering (per the steering mode).
         * Max turns is checked first, so a queued steering message stays queued.
         */
        preTurn: {
          always: [
            { guard: 'turnBudgetSpent', target: '#master.ended', actions: end('failed', 'maxTurns') },
            { target: 'turn', actions: 'startFreshTurn' },
          ],
        },
        /**
         * Every way in counts the attempt's model call: startFreshTurn and startNextTurn count it themselves
         * (the loop's usual ways round: one copy of the context), the rarer ways with countModelCall.
         */
        turn: {
          invoke: {
            id: 'turn',
            src: 'turn',
            input: ({ context }) => turnInputOf(context),
            // The turn's outcome goes to the step that decides on it.
            onDone: [
              { guard: 'abortWasRequested', target: 'stopping', actions: 'recordOutcome' },
              { guard: 'turnWasAborted', target: 'stopping', actions: 'recordOutcome' },
              {
                guard: 'policyStoppedSession',
                target: '#master.ended',
                actions: ['recordOutcome', end('completed', 'policyStop')],
              },
              { guard: 'turnFailed', target: 'recovering', actions: 'recordOutcome' },
              { guard: 'isReportMode', target: 'judgingReport', actions: 'recordOutcome' },
              // Tool results to answer: the next turn at once (the loop's usual way round).
              {
                guard: and(['turnRanTools', 'nextTurnAllowed']),
                target: 'turn',
                reenter: true,
                actions: 'startNextTurn',
              },
              { guard: 'turnRanTools', target: 'preTurn', actions: 'recordOutcome' },
              { target: 'continuing', actions: 'recordOutcome' },
            ],
            // A throw inside an effect or an action of the turn ends the session as an internal error,
            // never at the expense of the log: the runtime commits the turn's input and the published
            // reply with one result per call, and closes the turn.
            onError: INTERNAL_ERROR,
          },
          on: {
            STEER: { actions: ['queueSteering', 'acknowledgeQueued', 'forwardSteeringToTurn'] },
            // The turn ends itself inline on abort (its own recipe per state); the master then ends.
            // A turn finishing in the same step may never see it: the master remembers the abort too.
            ABORT: { actions: ['forwardAbortToTurn', 'recordAbortRequest'] },
            // The runtime's stop aborts the turn the same way; the run's end is decided as it arrives.
            STOP: { actions: ['forwardAbortToTurn', 'recordStop'] },
            APPROVAL_DECIDED: { actions: 'forwardDecisionToTurn' },
          },
        },
        /** Aborted (or stopped): a turn a deferred failure left open is closed first. */
        stopping: {
          always: [
            { guard: 'turnIsOpen', target: 'closingTurn' },
            { guard: 'runWasStopped', target: '#master.ended' },
            { target: '#master.ended', actions: ABORTED },
          ],
        },
        /** The open turn publishes an empty aborted message and its turnEnd, then the run ends. */
        closingTurn: {
          invoke: {
            id: 'closingTurn',
            src: 'turn',
            input: ({ context }) => ({ ...turnInputOf(context), attempt: 'closing' as const }),
            onDone: [
              { guard: 'runWasStopped', target: '#master.ended', actions: 'recordOutcome' },
              { target: '#master.ended', actions: ['recordOutcome', ABORTED] },
            ],
            onError: INTERNAL_ERROR,
          },
          // The turn is being closed as aborted already; a STOP still decides how the run ends.
          on: { ABORT: {}, STOP: { actions: 'recordStop' } },
        },
        /** The turn failed: recover (overflow, retry, fallback) or end. */
        recovering: {
          always: [
            { guard: 'contextOverflowed', target: 'overflowRecovery', actions: 'useOverflowAllowance' },
            { guard: 'retryableErrorWithAttemptsLeft', target: 'backoff', actions: ['planRetry', 'retrySameTurn'] },
            {
              guard: 'fallbackModelLeft',
              target: 'turn',
              actions: ['switchToFallbackModel', 'announceModelFallback', 'countModelCall'],
            },
            {
              guard: 'failedWithRetryableError',
              target: '#master.ended',
              actions: endWithTurnError('retryExhausted'),
            },
            { target: '#master.ended', actions: endWithTurnError('fatalError') },
          ],
        },
        /** Report mode: a final report ends the session; a turn with no work is retried with guidance. */
        judgingReport: {
          always: [
            { guard: 'finalReportAccepted', target: '#master.ended', actions: end('completed', 'finalReport') },
            { guard: 'turnDidWork', target: 'continuing' },
            {
              guard: and(['failedTurnRetryLeft', 'anotherTurnAllowed']),
              target: 'turn',
              actions: [
                'countFailedReportTurn',
                'discardFailedReportTurn',
                'queueReportGuidance',
                'retryFailedTurn',
                'countModelCall',
              ],
            },
            {
              guard: 'failedTurnRetryLeft',
              target: '#master.ended',
              actions: ['countFailedReportTurn', end('failed', 'maxTurns')],
            },
            { target: '#master.ended', actions: ['countFailedReportTurn', end('failed', 'retryExhausted')] },
          ],
        },
        /** The turn went well: more work (tool results to answer, pending messages) or the outer loop. */
        continuing: {
          always: [
            { guard: 'turnRanTools', target: 'preTurn' },
            // A text-only turn does not end the inner loop while messages are pending.
            { guard: 'hasPendingMessages', target: 'preTurn' },
            { guard: 'hasPostLoopPolicies', target: 'runningPostLoopPolicies' },
            { target: 'pollingFollowUps' },
          ],
        },
        /** Waits `retryDelayMs` on the XState clock, then re-runs the same turn. */
        backoff: {
          entry: 'announceRetry',
          after: { retryDelay: { target: 'turn', actions: 'countModelCall' } },
          on: {
            ABORT: { target: 'closingTurn', actions: 'recordAbortRequest' },
            STOP: { target: 'closingTurn', actions: 'recordStop' },
          },
        },
        /** Transforms the context with overflow=true once per turn, then re-runs the same turn. */
        overflowRecovery: {
          invoke: {
            src: 'recoverFromOverflow',
            input: ({ context }) => ({ turnIndex: context.turnIndex }),
            onDone: { target: 'turn', actions: ['recordOverflowView', 'countModelCall'] },
          },
          on: {
            ABORT: { target: 'closingTurn', actions: 'recordAbortRequest' },
            STOP: { target: 'closingTurn', actions: 'recordStop' },
          },
        },
        /** Post-loop policies run once per outer iteration; follow-ups are polled only after them. */
        runningPostLoopPolicies: {
          invoke: {
            src: 'runPostLoopPolicies',
            input: ({ context }) => ({ turnIndex: context.turnIndex }),
            onDone: [
              { guard: 'postLoopPolicyStopped', target: '#master.ended', actions: end('completed', 'policyStop') },
              { guard: 'postLoopPolicyInjected', target: 'preTurn', actions: 'injectPostLoopMessages' },
              { target: 'pollingFollowUps' },
            ],
          },
        },
        pollingFollowUps: {
          always: [
            // At max turns a queued follow-up stays queued (never taken and dropped).
            {
              guard: and(['hasFollowUps', 'turnBudgetSpent']),
              target: '#master.ended',
              actions: end('failed', 'maxTurns'),
            },
            { guard: 'hasFollowUps', target: 'preTurn', actions: 'takeFollowUps' },
            { guard: 'isReportMode', target: '#master.ended', actions: end('failed', 'retryExhausted') },
            { target: '#master.ended', actions: end('completed', 'naturalEnd') },
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
    ...context.end,
    steeringQueue: context.steeringQueue,
    followUpQueue: context.followUpQueue,
    turnIndex: context.turnIndex,
    modelIndex: context.modelIndex,
  }),
});
