import { and, assertEvent, enqueueActions, not, or } from 'xstate';
import { unfinishedText } from './tool-results.js';
import { approves, awaitingApproval, keptAnswers, resolutionOf } from './turn.approvals.js';
import {
  failureOf,
  initialContext,
  outputOf,
  type FailureDetail,
  type TurnContext,
  type TurnEvent,
} from './turn.context.js';
import { turnSetup } from './turn.setup.js';
import type { ResponseOutput, Settled, TurnEnding } from './turn.types.js';

export type { TurnContext, TurnEvent } from './turn.context.js';

/**
 * One turn: USER_INPUT → ASSISTANT → TOOL_EXECUTION → RESPONSE.
 *
 * The turn never retries and knows no other model: a failure the master has promised to recover
 * (retry, fallback, overflow) ends the turn in `deferredToMaster` without closing it, so the
 * re-run attempt continues the same logical turn (no second turnStart or messageStart).
 * Tool calls are child actors of the turn (one per prepared call, created by `startCalls`); the pool, its
 * groups and their cancellation are the states of TOOL_EXECUTION. Every effect (model stream,
 * policies, approvals, tool execution, event publication) is a named actor or action that
 * `src/runtime` provides; what an effect produces comes back as its output and is assigned here.
 */

const end = (ending: TurnEnding) => ({ type: 'endTurnAs', params: ending }) as const;
const ABORTED: TurnEnding = { kind: 'aborted', turnEndReason: 'aborted', error: null };
const STEERED: TurnEnding = { kind: 'success', detail: 'steered', turnEndReason: 'steeringInterrupt', error: null };
const TOOLS_EXECUTED: TurnEnding = { kind: 'success', turnEndReason: 'toolsExecuted', error: null };
const COMPLETE: TurnEnding = { kind: 'success', turnEndReason: 'complete', error: null };
/** The reply failed: recorded with the decision on it, which carries the reply's error. */
const failedReply = (detail: FailureDetail) =>
  ({
    type: 'recordReply',
    params: ({ event }: { event: { type: string } }) => ({ ending: failureOf(detail, event) }),
  }) as const;
const unfinished = (kind: 'aborted' | 'steeringSkipped' | 'replyFailed') =>
  ({ type: 'settleUnfinishedCalls', params: { kind } }) as const;
/** toolApprovalResolved for the call a handler's verdict decides (the verdict names it). */
const resolvedByVerdict = (approved: boolean) =>
  ({
    type: 'announceApprovalResolved',
    params: ({ event }: { event: TurnEvent }) => {
      assertEvent(event, 'APPROVAL_VERDICT');
      return { toolCallId: event.toolCallId, toolName: event.toolName, approved };
    },
  }) as const;

/**
 * Each kept `resolveApproval` answer whose call waits decides that call, in the order they came: its
 * toolApprovalResolved, a refusal counted, the call approved or settled.
 */
const applyKeptDecisions = turnSetup.createAction(
  enqueueActions(({ context, enqueue }) => {
    for (const { asked, verdict } of keptAnswers(context)) {
      const approved = approves(verdict);
      enqueue({ type: 'announceApprovalResolved', params: resolutionOf(asked.call, approved) });
      if (!approved) enqueue('countRejectedCall');
      enqueue({ type: 'decideCall', params: { asked, verdict } });
    }
  }),
);

/** Steering before anything started: no call starts, each unstarted one is skipped. */
const interruptedBySteering = ['noteSteering', end(STEERED), unfinished('steeringSkipped')] as const;
/** Abort before anything started: every unresolved call is settled at once. */
const abortedBeforeDispatch = [end(ABORTED), unfinished('aborted')] as const;

export const turnMachine = turnSetup.createMachine({
  id: 'turn',
  context: ({ input }) => initialContext(input),
  initial: 'USER_INPUT',
  on: {
    // Steering accepted in any state is remembered; it takes effect at the turn's next decision
    // (the states that can act on it at once handle it themselves).
    STEERING_ARRIVED: { actions: 'noteSteering' },
    APPROVAL_DECIDED: { actions: 'keepDecision' },
  },
  states: {
    USER_INPUT: {
      initial: 'checkingPolicies',
      on: {
        // Aborted before the model was called: a well-formed, empty turn; the input is committed anyway
        // (a steering message taken for this turn is delivered, never lost).
        ABORT: { target: 'done', actions: ['announceTurnStart', 'commitTurnInput', end(ABORTED)] },
      },
      states: {
        checkingPolicies: {
          always: [
            // Resumed after a restart: a committed turn only lacks its turnEnd; a published reply's tools continue.
            {
              guard: 'resumesCommittedTurn',
              target: '#turn.done',
              actions: ['recordResumedReply', 'endAsResumedReply'],
            },
            {
              guard: 'resumesWithToolsToRun',
              target: '#turn.TOOL_EXECUTION.preprocessing',
              actions: 'recordResumedReply',
            },
            {
              guard: 'resumesWithPublishedReply',
              target: '#turn.RESPONSE',
              actions: ['recordResumedReply', 'endAsResumedReply'],
            },
            { guard: 'isContinuationAttempt', target: '#turn.ASSISTANT' },
            { guard: 'hasPreTurnPolicies', target: 'runningPreTurnPolicies' },
            { target: '#turn.ASSISTANT', actions: ['announceTurnStart', 'commitTurnInput'] },
          ],
        },
        runningPreTurnPolicies: {
          invoke: {
            src: 'runPreTurnPolicies',
            input: ({ context }) => ({ turnIndex: context.input.turnIndex, newMessages: context.input.newMessages }),
            onDone: [
              // A pre-turn policy stopped the session: no turnStart, no turnEnd; the input is kept in history.
              {
                guard: 'preTurnPolicyStopped',
                target: '#turn.stoppedBeforeStart',
                actions: ['commitTurnInput', 'recordPreTurnStop'],
              },
              {
                target: '#turn.ASSISTANT',
                actions: ['recordPreTurnInjections', 'announceTurnStart', 'commitTurnInput'],
              },
            ],
          },
        },
      },
    },

    /** The model stream; its reply is classified where it arrives. */
    ASSISTANT: {
      invoke: {
        src: 'callModel',
        input: ({ context }) => ({
          turnIndex: context.input.turnIndex,
          attempt: context.input.attempt,
          overflowView: context.input.overflowView,
          modelIndex: context.input.modelIndex,
        }),
        onDone: [
          // Aborted before the model was called: no message to publish, an empty aborted turn.
          { guard: 'modelNotCalled', target: 'done', actions: end(ABORTED) },
          {
            guard: or(['abortArrivedWhileStreaming', 'replyWasAborted']),
            target: 'RESPONSE',
            actions: ['recordReply', 'publishAssistantMessage', ...abortedBeforeDispatch],
          },
          {
            guard: 'overflowIsRecoverable',
            target: 'deferredToMaster',
            actions: failedReply('overflow'),
          },
          {
            guard: 'errorIsRetryable',
            target: 'deferredToMaster',
            actions: failedReply('retryable'),
          },
          {
            guard: 'fallbackCanTakeOver',
            target: 'deferredToMaster',
            actions: failedReply('retryable'),
          },
          {
            // Tool calls the failed reply completed still get a result each (parity).
            guard: 'replyFailed',
            target: 'RESPONSE',
            actions: [failedReply('fatal'), 'publishAssistantMessage', unfinished('replyFailed')],
          },
          // Nothing to check before dispatch: the calls start at once (the hot path of a tool turn).
          {
            guard: 'replyRunsAtOnce',
            target: 'TOOL_EXECUTION.running',
            actions: ['recordReplyAndStartBatch', 'publishAssistantMessage', 'startCalls'],
          },
          { guard: 'replyHasToolCalls', target: 'TOOL_EXECUTION', actions: ['recordReply', 'publishAssistantMessage'] },
          {
            guard: 'hasPostTurnPolicies',
            target: 'RESPONSE',
            actions: [{ type: 'recordReply', params: { ending: COMPLETE } }, 'publishAssistantMessage'],
          },
          // An answer and nothing to check after it: committed and closed in this step.
          {
            target: 'done',
            actions: [{ type: 'recordReply', params: { ending: COMPLETE } }, 'publishAssistantMessage', 'commitTurn'],
          },
        ],
      },
      initial: 'streaming',
      states: {
        streaming: {
          // The stream watches the run's signal and ends at once; the reply then arrives marked aborted.
          on: { ABORT: 'abortRequested' },
        },
        abortRequested: {},
      },
    },

    TOOL_EXECUTION: {
      initial: 'dispatching',
      on: {
        // Before anything runs, an abort settles every unresolved call at once.
        ABORT: { target: 'RESPONSE', actions: abortedBeforeDispatch },
      },
      states: {
        /**
         * Which checks the calls go through before they start. The model-call effect has prepared
         * them (unknown tools and invalid arguments got an error result each and never start).
         */
        dispatching: {
          always: [
            // Steering arrived while the model streamed, a backoff ran, or in the very step that
            // published the reply: no call starts.
            { guard: 'steeringInterruptsBatch', target: '#turn.RESPONSE', actions: interruptedBySteering },
            { guard: 'preparedRunAtOnce', target: 'running', actions: ['startBatch', 'startCalls'] },
            { guard: 'hasPreDispatchPolicies', target: 'runningPreDispatchPolicies' },
            { target: 'approval' },
          ],
        },
        /** A turn resumed after a restart: its published reply's calls are checked against the tool registry again. */
        preprocessing: {
          invoke: {
            src: 'prepareToolCalls',
            input: ({ context }) => ({
              turnIndex: context.input.turnIndex,
              reply: context.reply as NonNullable<typeof context.reply>,
              decided: decidedPositions(context.settled),
              approved: context.input.resume?.approvedCallIds ?? [],
              approvedArguments: context.input.resume?.approvedArguments ?? {},
            }),
            onDone: { target: 'dispatching', actions: 'recordPrepared' },
          },
        },
        /** Batch-wide and two-pass: every call clears pre-dispatch before any approval starts. */
        runningPreDispatchPolicies: {
          on: {
            // Steering before dispatch: the policies are not waited for and no call starts.
            STEERING_ARRIVED: [
              { guard: 'steeringInterruptsTools', target: '#turn.RESPONSE', actions: interruptedBySteering },
              { actions: 'noteSteering' },
            ],
          },
          invoke: {
            src: 'runPreDispatchPolicies',
            input: ({ context }) => ({ turnIndex: context.input.turnIndex, prepared: context.prepared }),
            onDone: [
              // A policy stopped the batch: recording that decision ends the turn and settles every call.
              { guard: 'preDispatchStopped', target: '#turn.RESPONSE', actions: 'recordPreDispatch' },
              { target: 'approval', actions: 'recordPreDispatch' },
            ],
          },
        },
        /** Every call awaiting approval is asked at once; the batch goes on when the last one is decided. */
        approval: {
          always: [
            { guard: 'hasCallsAwaitingApproval', target: 'askingApproval' },
            // approveWith(new arguments): the rewritten calls clear pre-dispatch again.
            { guard: 'rewrittenCallsNeedPreDispatch', target: 'runningPreDispatchPolicies' },
            { target: 'dispatch' },
          ],
        },
        /**
         * The requests are published (one per call, in call order) once the step that chose the calls is
         * over (a steer or an abort accepted meanwhile comes first, and one accepted in a request's
         * subscriber stops the requests after it). Then each call is decided on its own,
         * in any order: by the handler, asked about each at once, or — in a stored session with no
         * handler — by `resolveApproval`, across restarts and from any agent on the session.
         */
        askingApproval: {
          invoke: {
            src: 'askApproval',
            input: ({ context }) => ({ turnIndex: context.input.turnIndex, calls: awaitingApproval(context) }),
          },
          initial: 'requesting',
          states: {
            // The requests go out one event each, so a steer or an abort from a request's subscriber stops the rest.
            requesting: {
              always: { guard: 'everyApprovalRequested', target: 'waiting' },
            },
            waiting: {
              // Kept `resolveApproval` answers decide their calls; the last decision moves on.
              always: [
                { guard: 'keptDecisionArrived', actions: applyKeptDecisions },
                { guard: 'everyApprovalDecided', target: '#turn.TOOL_EXECUTION.approval' },
              ],
              on: {
                APPROVAL_VERDICT: [
                  { guard: 'verdictApproves', actions: [resolvedByVerdict(true), 'recordVerdict'] },
                  {
                    guard: 'verdictForAwaitingCall',
                    actions: [resolvedByVerdict(false), 'countRejectedCall', 'recordVerdict'],
                  },
                ],
              },
            },
          },
          on: {
            APPROVAL_REQUESTED: { actions: ['announceApprovalRequest', 'noteApprovalAsked'] },
            // Steering withdraws the published requests (each resolved as denied; the handlers are signalled); no call starts.
            STEERING_ARRIVED: [
              {
                guard: and(['steeringInterruptsTools', 'approvalRequestsOut']),
                target: '#turn.RESPONSE',
                actions: ['withdrawApprovals', ...interruptedBySteering],
              },
              { guard: 'steeringInterruptsTools', target: '#turn.RESPONSE', actions: interruptedBySteering },
              { actions: 'noteSteering' },
            ],
            ABORT: [
              {
                guard: 'approvalRequestsOut',
                target: '#turn.RESPONSE',
                actions: ['withdrawApprovals', ...abortedBeforeDispatch],
              },
              { target: '#turn.RESPONSE', actions: abortedBeforeDispatch },
            ],
          },
        },
        /** Partition into groups; a custom partition that is out of range, has duplicates or gaps starts nothing. */
        dispatch: {
          always: [
            { guard: 'steeringInterruptsBatch', target: '#turn.RESPONSE', actions: interruptedBySteering },
            { guard: 'nothingToRun', target: '#turn.RESPONSE', actions: end(TOOLS_EXECUTED) },
            { guard: 'usesCustomPartition', target: 'partitioning' },
            { target: 'running', actions: ['startBatch', 'startCalls'] },
          ],
        },
        partitioning: {
          on: {
            STEERING_ARRIVED: [
              { guard: 'steeringInterruptsTools', target: '#turn.RESPONSE', actions: interruptedBySteering },
              { actions: 'noteSteering' },
            ],
          },
          invoke: {
            id: 'partition',
            src: 'partitionCalls',
            input: ({ context }) => ({ prepared: context.prepared }),
            onDone: [
              { guard: 'partitionIsInvalid', target: '#turn.RESPONSE', actions: 'recordPartition' },
              { target: 'running', actions: ['recordPartition', 'startCalls'] },
            ],
          },
        },
        /** The pool: tool-call actors run group after group, `limit` at a time; the turn waits for all. */
        running: {
          on: {
            'xstate.done.actor.*': [
              // The last call: nothing to check after the batch, so it is committed and closed in this step.
              {
                guard: and(['batchFinishes', not('hasPostTurnPolicies')]),
                target: '#turn.done',
                actions: [{ type: 'finishBatch', params: TOOLS_EXECUTED }, 'commitTurn'],
              },
              {
                guard: 'batchFinishes',
                target: '#turn.RESPONSE',
                actions: { type: 'finishBatch', params: TOOLS_EXECUTED },
              },
              { actions: ['recordCallResult', 'startCalls'] },
            ],
            // Steering: no further call starts; the running ones get a grace period.
            STEERING_ARRIVED: [
              {
                guard: 'steeringInterruptsTools',
                target: 'holding',
                actions: ['noteSteering', 'holdBatch', 'holdStartingCalls'],
              },
              { actions: 'noteSteering' },
            ],
            // Tools that ignore their signal must not hold the turn: their actors settle at once.
            ABORT: {
              target: 'cancelling',
              actions: [
                'holdBatch',
                end(ABORTED),
                { type: 'cancelRunningCalls', params: { result: unfinishedText({ kind: 'aborted' }) } },
              ],
            },
          },
        },
        /** Steering arrived: no further call starts; running ones get the grace period, then they are cancelled. */
        holding: {
          after: {
            steeringGrace: {
              target: 'cancelling',
              actions: [
                end(STEERED),
                { type: 'cancelRunningCalls', params: { result: unfinishedText({ kind: 'steering' }) } },
              ],
            },
          },
          on: {
            'xstate.done.actor.*': [
              {
                guard: 'batchFinishes',
                target: '#turn.RESPONSE',
                actions: [{ type: 'finishBatch', params: STEERED }, unfinished('steeringSkipped')],
              },
              { actions: 'recordCallResult' },
            ],
            ABORT: {
              target: 'cancelling',
              actions: [
                end(ABORTED),
                { type: 'cancelRunningCalls', params: { result: unfinishedText({ kind: 'aborted' }) } },
              ],
            },
          },
        },
        /** The running calls were told to stop; each settles at once, then the turn moves on. */
        cancelling: {
          on: {
            'xstate.done.actor.*': [
              {
                guard: 'batchFinishes',
                target: '#turn.RESPONSE',
                actions: ['recordCallResult', 'settleCancelledBatch'],
              },
              { actions: 'recordCallResult' },
            ],
            ABORT: { actions: end(ABORTED) },
          },
        },
      },
    },

    /** Commit the assistant message and the results in call order, then post-turn policies see the committed snapshot. */
    RESPONSE: {
      entry: 'commitTurn',
      initial: 'committed',
      states: {
        committed: {
          always: [
            { guard: or(['turnWasAborted', not('hasPostTurnPolicies')]), target: '#turn.done' },
            { target: 'runningPostTurnPolicies' },
          ],
        },
        runningPostTurnPolicies: {
          invoke: {
            src: 'runPostTurnPolicies',
            input: ({ context }) => {
              const output = outputOf(context);
              return {
                turnIndex: context.input.turnIndex,
                assistant: output.assistant,
                toolResults: output.toolResults,
              };
            },
            onDone: { target: '#turn.done', actions: 'recordPostTurn' },
          },
          on: {
            ABORT: { target: '#turn.done', actions: end(ABORTED) },
          },
        },
      },
    },

    done: { type: 'final', entry: 'announceTurnEnd' },
    /** A pre-turn policy stopped the session: no turnStart, no turnEnd; the input is kept in history. */
    stoppedBeforeStart: { type: 'final' },
    /** The master promised to recover this failure; the turn stays open for the re-run attempt. */
    deferredToMaster: { type: 'final' },
  },
  output: ({ context }) => outputOf(context),
});

function decidedPositions(settled: Settled | null): number[] {
  const positions: number[] = [];
  for (let cell = settled; cell; cell = cell.rest) positions.push(cell.position);
  return positions;
}

export type { ResponseOutput };
