import { and, assign, not, or } from 'xstate';
import { resultsInCallOrder } from './tool-results.js';
import { EMPTY_RESULTS, turnOutputOf, turnSetup } from './turn.setup.js';

export type { BatchCommand, BatchInput, TurnContext, TurnEvent } from './turn.setup.js';

/**
 * One turn: USER_INPUT → ASSISTANT → TOOL_EXECUTION → RESPONSE.
 *
 * The turn never retries and knows no other model: a failure the master has promised to recover
 * (retry, fallback, overflow) ends the turn in `deferredToMaster` without closing it, so the
 * re-run attempt continues the same logical turn (no second turnStart or messageStart).
 * Every effect (model stream, policies, approvals, tool execution, event publication) is a named
 * actor or action that `src/runtime` provides.
 */

export const turnMachine = turnSetup.createMachine({
  id: 'turn',
  context: ({ input }) => ({
    turnIndex: input.turnIndex,
    features: input.features,
    resume: input.resume,
    startedCallIds: [],
    newMessages: input.newMessages,
    attempt: input.attempt,
    retryAvailable: input.retryAvailable,
    fallbackAvailable: input.fallbackAvailable,
    overflowRecoveryAvailable: input.overflowRecoveryAvailable,
    inputCommitted: input.attempt !== 'fresh',
    reply: null,
    prepared: [],
    results: EMPTY_RESULTS,
    groups: null,
    invalidPartition: null,
    endReason: null,
    deferred: null,
    stopped: false,
    abortRequested: false,
    steeringArrived: input.steeringArrived,
    inputInjected: [],
    injected: [],
    assistantOverride: null,
  }),
  initial: 'USER_INPUT',
  on: {
    // Steering accepted in any state is remembered; it takes effect at the turn's next decision
    // (the states that can act on it at once handle it themselves).
    STEERING_ARRIVED: { actions: 'noteSteering' },
  },
  states: {
    USER_INPUT: {
      initial: 'checkingPolicies',
      on: {
        ABORT: { target: 'abortedBeforeModelCall' },
      },
      states: {
        checkingPolicies: {
          always: [
            { guard: 'resumesWithPublishedToolCalls', target: '#turn.TOOL_EXECUTION', actions: 'takeResumedReply' },
            // A published reply without tool calls was classified before the crash: it ends the turn the same way.
            {
              guard: and(['resumesWithPublishedReply', 'resumedReplyFailed']),
              target: '#turn.RESPONSE',
              actions: ['takeResumedReply', { type: 'endTurnAs', params: { reason: 'error' } }],
            },
            {
              guard: and(['resumesWithPublishedReply', 'resumedReplyAborted']),
              target: '#turn.RESPONSE',
              actions: ['takeResumedReply', 'markAbortRequested', { type: 'endTurnAs', params: { reason: 'aborted' } }],
            },
            {
              guard: 'resumesWithPublishedReply',
              target: '#turn.RESPONSE',
              actions: ['takeResumedReply', { type: 'endTurnAs', params: { reason: 'complete' } }],
            },
            { guard: 'isContinuationAttempt', target: '#turn.ASSISTANT' },
            { guard: 'hasPreTurnPolicies', target: 'runningPreTurnPolicies' },
            { target: '#turn.ASSISTANT', actions: ['announceTurnStart', 'commitTurnInput', 'markInputCommitted'] },
          ],
        },
        runningPreTurnPolicies: {
          invoke: {
            src: 'runPreTurnPolicies',
            input: ({ context }) => ({ turnIndex: context.turnIndex, newMessages: context.newMessages }),
            onDone: [
              {
                guard: ({ event }) => event.output.stopped,
                target: '#turn.stoppedBeforeStart',
                actions: assign({ stopped: true }),
              },
              {
                target: '#turn.ASSISTANT',
                actions: [
                  assign({ inputInjected: ({ event }) => event.output.injected }),
                  'announceTurnStart',
                  'commitTurnInput',
                  'markInputCommitted',
                ],
              },
            ],
          },
        },
      },
    },

    /** Aborted before the model was called: a well-formed, empty turn. */
    abortedBeforeModelCall: {
      // The input is committed anyway: a steering message taken for this turn is delivered, never lost.
      entry: [
        'announceTurnStart',
        'commitTurnInput',
        'markInputCommitted',
        { type: 'endTurnAs', params: { reason: 'aborted' } },
        'markAbortRequested',
      ],
      always: { target: 'done' },
    },

    ASSISTANT: {
      initial: 'streaming',
      on: {
        // The stream watches the run's signal and ends at once; the reply then arrives marked aborted.
        ABORT: { actions: 'markAbortRequested' },
      },
      states: {
        streaming: {
          invoke: {
            src: 'callModel',
            input: ({ context }) => ({ turnIndex: context.turnIndex, attempt: context.attempt }),
            onDone: [
              // Aborted before the model was called: no message to publish, an empty aborted turn.
              {
                guard: ({ event }) => !event.output.called,
                target: '#turn.done',
                actions: ['markAbortRequested', { type: 'endTurnAs', params: { reason: 'aborted' } }],
              },
              { target: 'classifyingReply', actions: assign({ reply: ({ event }) => event.output }) },
            ],
          },
        },
        classifyingReply: {
          always: [
            {
              guard: 'replyWasAborted',
              target: '#turn.RESPONSE',
              actions: [
                'publishAssistantMessage',
                { type: 'endTurnAs', params: { reason: 'aborted' } },
                { type: 'settleUnfinishedCalls', params: { kind: 'aborted' } },
              ],
            },
            { guard: 'overflowIsRecoverable', target: '#turn.deferredToMaster', actions: assign({ deferred: 'overflow' }) },
            { guard: 'errorIsRetryable', target: '#turn.deferredToMaster', actions: assign({ deferred: 'retryable' }) },
            { guard: 'fallbackCanTakeOver', target: '#turn.deferredToMaster', actions: assign({ deferred: 'fallback' }) },
            {
              // Tool calls the failed reply completed still get a result each (parity).
              guard: 'replyFailed',
              target: '#turn.RESPONSE',
              actions: [
                'publishAssistantMessage',
                { type: 'endTurnAs', params: { reason: 'error' } },
                { type: 'settleUnfinishedCalls', params: { kind: 'replyFailed' } },
              ],
            },
            { guard: 'hasToolCalls', target: '#turn.TOOL_EXECUTION', actions: 'publishAssistantMessage' },
            {
              target: '#turn.RESPONSE',
              actions: ['publishAssistantMessage', { type: 'endTurnAs', params: { reason: 'complete' } }],
            },
          ],
        },
      },
    },

    TOOL_EXECUTION: {
      initial: 'preprocess',
      on: {
        // Before anything runs, an abort settles every unresolved call at once.
        ABORT: {
          target: 'RESPONSE',
          actions: [
            'markAbortRequested',
            { type: 'endTurnAs', params: { reason: 'aborted' } },
            { type: 'settleUnfinishedCalls', params: { kind: 'aborted' } },
          ],
        },
      },
      states: {
        preprocess: {
          entry: 'prepareToolCalls',
          always: [
            // Steering arrived while the model streamed (or during a backoff): no call starts.
            {
              guard: 'steeringInterruptsBatch',
              target: '#turn.RESPONSE',
              actions: [
                { type: 'endTurnAs', params: { reason: 'steeringInterrupt' } },
                { type: 'settleUnfinishedCalls', params: { kind: 'steeringSkipped' } },
              ],
            },
            // Nothing to check before dispatch and a strategy that cannot be invalid: straight to the tools.
            {
              guard: and([not('hasPreDispatchPolicies'), not('hasCallsAwaitingApproval'), 'strategyCannotBeInvalid', not('nothingToRun')]),
              target: 'collect',
              actions: 'planDispatch',
            },
            { target: 'preDispatch' },
          ],
        },
        /** Batch-wide and two-pass: every call clears pre-dispatch before any approval starts. */
        preDispatch: {
          always: [{ guard: not('hasPreDispatchPolicies'), target: 'approval' }, { target: 'runningPreDispatchPolicies' }],
        },
        runningPreDispatchPolicies: {
          on: {
            // Steering before dispatch: the policies are not waited for and no call starts.
            STEERING_ARRIVED: [
              {
                guard: 'steeringInterruptsTools',
                target: '#turn.RESPONSE',
                actions: [
                  'noteSteering',
                  { type: 'endTurnAs', params: { reason: 'steeringInterrupt' } },
                  { type: 'settleUnfinishedCalls', params: { kind: 'steeringSkipped' } },
                ],
              },
              { actions: 'noteSteering' },
            ],
          },
          invoke: {
            src: 'runPreDispatchPolicies',
            input: ({ context }) => ({ turnIndex: context.turnIndex, prepared: context.prepared, results: context.results }),
            onDone: [
              {
                guard: ({ event }) => event.output.stopped,
                target: '#turn.RESPONSE',
                actions: [
                  assign({ results: ({ event }) => event.output.results, injected: ({ context, event }) => [...context.injected, ...event.output.injected], stopped: true }),
                  { type: 'endTurnAs', params: { reason: 'stopped' } },
                  { type: 'settleUnfinishedCalls', params: ({ event }) => ({ kind: 'stopped', reason: event.output.stopReason ?? 'a pre-dispatch policy stopped the batch' }) },
                ],
              },
              {
                target: 'approval',
                actions: assign({
                  prepared: ({ event }) => event.output.prepared,
                  results: ({ event }) => event.output.results,
                  injected: ({ context, event }) => [...context.injected, ...event.output.injected],
                }),
              },
            ],
          },
        },
        approval: {
          always: [{ guard: not('hasCallsAwaitingApproval'), target: 'dispatch' }, { target: 'awaitingApproval' }],
        },
        awaitingApproval: {
          on: {
            // Steering withdraws the pending approval (resolved as denied); no call starts.
            STEERING_ARRIVED: [
              {
                guard: 'steeringInterruptsTools',
                target: '#turn.RESPONSE',
                actions: [
                  'noteSteering',
                  'denyPendingApproval',
                  { type: 'endTurnAs', params: { reason: 'steeringInterrupt' } },
                  { type: 'settleUnfinishedCalls', params: { kind: 'steeringSkipped' } },
                ],
              },
              { actions: 'noteSteering' },
            ],
            ABORT: {
              target: '#turn.RESPONSE',
              actions: [
                'denyPendingApproval',
                'markAbortRequested',
                { type: 'endTurnAs', params: { reason: 'aborted' } },
                { type: 'settleUnfinishedCalls', params: { kind: 'aborted' } },
              ],
            },
          },
          invoke: {
            src: 'requestApprovals',
            input: ({ context }) => ({ turnIndex: context.turnIndex, prepared: context.prepared, results: context.results }),
            onDone: [
              {
                // approveWith(newArguments): the rewritten calls go through pre-dispatch again.
                guard: { type: 'argumentsWereRewritten', params: ({ event }) => ({ rewritten: event.output.rewritten }) },
                target: 'preDispatch',
                actions: assign({ prepared: ({ event }) => event.output.prepared, results: ({ event }) => event.output.results }),
              },
              {
                target: 'dispatch',
                actions: assign({ prepared: ({ event }) => event.output.prepared, results: ({ event }) => event.output.results }),
              },
            ],
          },
        },
        dispatch: {
          entry: 'planDispatch',
          always: [
            {
              guard: 'partitionIsInvalid',
              target: '#turn.RESPONSE',
              actions: [
                { type: 'endTurnAs', params: { reason: 'toolsExecuted' } },
                { type: 'settleUnfinishedCalls', params: ({ context }) => ({ kind: 'invalidPartition', reason: context.invalidPartition ?? '' }) },
              ],
            },
            { guard: 'nothingToRun', target: '#turn.RESPONSE', actions: { type: 'endTurnAs', params: { reason: 'toolsExecuted' } } },
            { target: 'collect' },
          ],
        },
        /** Tool-call actors run group after group; the turn waits for the whole batch to settle. */
        collect: {
          invoke: {
            id: 'toolBatch',
            src: 'executeToolCalls',
            input: ({ context }) => ({
              turnIndex: context.turnIndex,
              prepared: context.prepared,
              groups: context.groups ?? [],
              results: context.results,
            }),
          },
          initial: 'running',
          states: {
            running: {
              on: {
                STEERING_ARRIVED: [
                  {
                    guard: 'steeringInterruptsTools',
                    target: 'steeringGrace',
                    actions: ['noteSteering', 'holdToolBatch'],
                  },
                  { actions: 'noteSteering' },
                ],
              },
            },
            /** Steering arrived: no further call starts; running ones get a grace period, then they are cancelled. */
            steeringGrace: {
              after: {
                steeringGrace: { actions: { type: 'cancelToolBatch', params: { type: 'CANCEL', reason: 'steering' } } },
              },
            },
          },
          on: {
            // Tools that ignore their signal must not hold the turn: the batch settles them at once.
            ABORT: {
              actions: ['markAbortRequested', { type: 'cancelToolBatch', params: { type: 'CANCEL', reason: 'aborted' } }],
            },
            BATCH_SETTLED: [
              {
                guard: 'turnWasAborted',
                target: '#turn.RESPONSE',
                actions: [
                  assign({ results: ({ event }) => event.results, startedCallIds: ({ event }) => event.startedCallIds }),
                  { type: 'endTurnAs', params: { reason: 'aborted' } },
                  { type: 'settleUnfinishedCalls', params: { kind: 'aborted' } },
                ],
              },
              {
                guard: ({ event }) => event.interrupted,
                target: '#turn.RESPONSE',
                actions: [
                  assign({ results: ({ event }) => event.results, startedCallIds: ({ event }) => event.startedCallIds }),
                  { type: 'endTurnAs', params: { reason: 'steeringInterrupt' } },
                ],
              },
              {
                target: '#turn.RESPONSE',
                actions: [
                  assign({ results: ({ event }) => event.results, startedCallIds: ({ event }) => event.startedCallIds }),
                  { type: 'endTurnAs', params: { reason: 'toolsExecuted' } },
                ],
              },
            ],
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
          always: [{ guard: or(['turnWasAborted', not('hasPostTurnPolicies')]), target: '#turn.done' }, { target: 'runningPostTurnPolicies' }],
        },
        runningPostTurnPolicies: {
          invoke: {
            src: 'runPostTurnPolicies',
            input: ({ context }) => ({
              turnIndex: context.turnIndex,
              toolResults: resultsInCallOrder(context.reply?.message ?? null, context.results),
            }),
            onDone: {
              target: '#turn.done',
              actions: assign({
                stopped: ({ context, event }) => context.stopped || event.output.stopped,
                injected: ({ context, event }) => [...context.injected, ...event.output.injected],
                assistantOverride: ({ event }) => event.output.assistant,
              }),
            },
          },
          on: {
            ABORT: { target: '#turn.done', actions: ['markAbortRequested', { type: 'endTurnAs', params: { reason: 'aborted' } }] },
          },
        },
      },
    },

    done: { type: 'final', entry: 'announceTurnEnd' },
    /** A pre-turn policy stopped the session: no turnStart, no turnEnd; the input is kept in history. */
    stoppedBeforeStart: { type: 'final', entry: ['commitTurnInput', 'markInputCommitted'] },
    /** The master promised to recover this failure; the turn stays open for the re-run attempt. */
    deferredToMaster: { type: 'final' },
  },
  output: ({ context }) => turnOutputOf(context),
});

