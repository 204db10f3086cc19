import { assign, fromCallback, fromPromise, not, or, sendTo, setup } from 'xstate';
import type { TurnEndReason } from '../src/domain/events.js';
import type { Message } from '../src/domain/messages.js';
import { toolCallsOf } from '../src/domain/messages.js';
import { resultsInCallOrder, settleUnfinished, type UnfinishedReason } from './tool-results.js';
import type {
  ApprovalOutput,
  ModelReply,
  PreDispatchOutput,
  PreparedCall,
  ResponseOutput,
  ResultsByPosition,
  TurnAttempt,
  TurnFeatures,
  TurnInput,
  TurnResume,
  TurnOutput,
} from './turn.types.js';

/**
 * One turn: USER_INPUT → ASSISTANT → TOOL_EXECUTION → RESPONSE.
 *
 * The turn never retries and knows no other model: a failure the master has promised to recover
 * (retry, fallback, overflow) ends the turn in `deferredToMaster` without closing it, so the
 * re-run attempt continues the same logical turn (no second turnStart or messageStart).
 * Every effect (model stream, policies, approvals, tool execution, event publication) is a named
 * actor or action that `src/runtime` provides.
 */

export type TurnEvent =
  | { type: 'ABORT' }
  | { type: 'STEERING_ARRIVED' }
  | { type: 'BATCH_SETTLED'; results: ResultsByPosition; interrupted: boolean; startedCallIds: string[] };

/** Commands the tool batch actor accepts. */
export type BatchCommand = { type: 'CANCEL'; reason: 'aborted' | 'steering' };

export interface BatchInput {
  turnIndex: number;
  prepared: PreparedCall[];
  groups: number[][];
  results: ResultsByPosition;
}

export interface TurnContext {
  turnIndex: number;
  features: TurnFeatures;
  resume: TurnResume | null;
  startedCallIds: string[];
  newMessages: Message[];
  attempt: TurnAttempt;
  retryAvailable: boolean;
  fallbackAvailable: boolean;
  overflowRecoveryAvailable: boolean;
  inputCommitted: boolean;
  reply: ModelReply | null;
  prepared: PreparedCall[];
  results: ResultsByPosition;
  groups: number[][] | null;
  invalidPartition: string | null;
  endReason: TurnEndReason | null;
  deferred: 'retryable' | 'overflow' | 'fallback' | null;
  stopped: boolean;
  abortRequested: boolean;
  /** Pre-turn injections: committed with this turn's input. */
  inputInjected: Message[];
  /** Later injections (pre-dispatch, post-turn): the next turn's input. */
  injected: Message[];
  assistantOverride: ModelReply['message'] | null;
}

const notProvided = (name: string) => () => {
  throw new Error(`agentchart: the runtime must provide the turn machine's "${name}"`);
};

const EMPTY_RESULTS: ResultsByPosition = new Map();

export const turnMachine = setup({
  types: {
    context: {} as TurnContext,
    events: {} as TurnEvent,
    input: {} as TurnInput,
    output: {} as TurnOutput,
  },
  actors: {
    runPreTurnPolicies: fromPromise<{ stopped: boolean; injected: Message[] }, { turnIndex: number; newMessages: Message[] }>(
      notProvided('runPreTurnPolicies'),
    ),
    callModel: fromPromise<ModelReply, { turnIndex: number; attempt: TurnAttempt }>(notProvided('callModel')),
    runPreDispatchPolicies: fromPromise<
      PreDispatchOutput,
      { turnIndex: number; prepared: PreparedCall[]; results: ResultsByPosition }
    >(notProvided('runPreDispatchPolicies')),
    requestApprovals: fromPromise<ApprovalOutput, { turnIndex: number; prepared: PreparedCall[]; results: ResultsByPosition }>(
      notProvided('requestApprovals'),
    ),
    executeToolCalls: fromCallback<BatchCommand, BatchInput>(notProvided('executeToolCalls')),
    runPostTurnPolicies: fromPromise<ResponseOutput, { turnIndex: number; toolResults: ReturnType<typeof resultsInCallOrder> }>(
      notProvided('runPostTurnPolicies'),
    ),
  },
  guards: {
    isContinuationAttempt: ({ context }) => context.attempt !== 'fresh',
    /** Resumed after a crash with a published reply: its tools continue (replay rules applied). */
    resumesWithPublishedReply: ({ context }) => context.resume?.reply != null,
    hasPreTurnPolicies: ({ context }) => context.features.preTurnPolicies,
    hasPreDispatchPolicies: ({ context }) => context.features.preDispatchPolicies,
    hasPostTurnPolicies: ({ context }) => context.features.postTurnPolicies,
    steeringInterruptsTools: ({ context }) => context.features.steeringInterrupts,
    policyStopped: ({ context }) => context.stopped,
    replyWasAborted: ({ context }) => context.abortRequested || context.reply?.error?.kind === 'aborted',
    overflowIsRecoverable: ({ context }) =>
      context.reply?.error?.kind === 'contextOverflow' && context.overflowRecoveryAvailable,
    errorIsRetryable: ({ context }) => context.reply?.error?.retryable === true && context.retryAvailable,
    fallbackCanTakeOver: ({ context }) => context.reply?.error != null && context.fallbackAvailable,
    replyFailed: ({ context }) => context.reply?.error != null,
    hasToolCalls: ({ context }) => context.reply != null && toolCallsOf(context.reply.message).length > 0,
    hasCallsAwaitingApproval: ({ context }) => context.prepared.some((entry) => !entry.approved),
    argumentsWereRewritten: (_, params: { rewritten: boolean }) => params.rewritten,
    partitionIsInvalid: ({ context }) => context.invalidPartition !== null,
    nothingToRun: ({ context }) => context.prepared.length === 0,
    turnWasAborted: ({ context }) => context.endReason === 'aborted' || context.abortRequested,
  },
  actions: {
    announceTurnStart: notProvided('announceTurnStart'),
    commitTurnInput: notProvided('commitTurnInput'),
    publishAssistantMessage: notProvided('publishAssistantMessage'),
    commitTurn: notProvided('commitTurn'),
    announceTurnEnd: notProvided('announceTurnEnd'),
    /** Resolves the approval request in progress as denied, inside the turn, before its end. */
    denyPendingApproval: notProvided('denyPendingApproval'),
    /** Validates the calls against the tool registry: unknown / invalid calls get their error result here. */
    prepareToolCalls: assign({}),
    /** Splits the prepared calls into groups per the execution strategy, or marks the partition invalid. */
    planDispatch: assign({}),
    markInputCommitted: assign({ inputCommitted: true }),
    markAbortRequested: assign({ abortRequested: true }),
    endTurnAs: assign((_, params: { reason: TurnEndReason }) => ({ endReason: params.reason })),
    settleUnfinishedCalls: assign(({ context }, params: UnfinishedReason) => ({
      results: settleUnfinished(context.reply?.message ?? null, context.results, params),
    })),
    cancelToolBatch: sendTo('toolBatch', (_, params: BatchCommand) => params),
  },
  delays: {
    /** How long unfinished tools get to finish after steering arrives, before they are cancelled. */
    steeringGrace: ({ context }) => context.features.steeringGraceMs,
  },
}).createMachine({
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
    inputInjected: [],
    injected: [],
    assistantOverride: null,
  }),
  initial: 'USER_INPUT',
  states: {
    USER_INPUT: {
      initial: 'checkingPolicies',
      on: {
        ABORT: { target: 'abortedBeforeModelCall' },
      },
      states: {
        checkingPolicies: {
          always: [
            {
              guard: 'resumesWithPublishedReply',
              target: '#turn.TOOL_EXECUTION',
              actions: assign(({ context }) => ({ reply: context.resume?.reply ?? null, results: context.resume?.results ?? EMPTY_RESULTS })),
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
          always: 'preDispatch',
        },
        /** Batch-wide and two-pass: every call clears pre-dispatch before any approval starts. */
        preDispatch: {
          always: [{ guard: not('hasPreDispatchPolicies'), target: 'approval' }],
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
          always: [{ guard: not('hasCallsAwaitingApproval'), target: 'dispatch' }],
          on: {
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
                STEERING_ARRIVED: { guard: 'steeringInterruptsTools', target: 'steeringGrace' },
              },
            },
            /** Steering arrived: unfinished tools get a grace period, then they are cancelled. */
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
      always: [{ guard: or(['turnWasAborted', not('hasPostTurnPolicies')]), target: 'done' }],
      invoke: {
        src: 'runPostTurnPolicies',
        input: ({ context }) => ({
          turnIndex: context.turnIndex,
          toolResults: resultsInCallOrder(context.reply?.message ?? null, context.results),
        }),
        onDone: {
          target: 'done',
          actions: assign({
            stopped: ({ context, event }) => context.stopped || event.output.stopped,
            injected: ({ context, event }) => [...context.injected, ...event.output.injected],
            assistantOverride: ({ event }) => event.output.assistant,
          }),
        },
      },
      on: {
        ABORT: { target: 'done', actions: ['markAbortRequested', { type: 'endTurnAs', params: { reason: 'aborted' } }] },
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

function turnOutputOf(context: TurnContext): TurnOutput {
  const assistant = context.assistantOverride ?? context.reply?.message ?? null;
  const base = {
    turnEndReason: context.endReason,
    inputCommitted: context.inputCommitted,
    assistant,
    toolResults: resultsInCallOrder(context.reply?.message ?? null, context.results),
    error: context.reply?.error ?? null,
    injected: context.injected,
    startedCallIds: context.startedCallIds,
  };
  if (context.deferred) return { ...base, kind: 'failure', detail: context.deferred === 'overflow' ? 'overflow' : 'retryable' };
  if (context.abortRequested || context.endReason === 'aborted') return { ...base, kind: 'aborted' };
  if (context.stopped) return { ...base, kind: 'finished', detail: 'stopped' };
  if (context.endReason === 'error') return { ...base, kind: 'failure', detail: 'fatal' };
  if (context.endReason === 'steeringInterrupt') return { ...base, kind: 'success', detail: 'steered' };
  return { ...base, kind: 'success' };
}
