import { assign, fromCallback, fromPromise, sendTo, setup } from 'xstate';
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
  TurnOutput,
  TurnResume,
} from './turn.types.js';

/**
 * The turn machine's vocabulary: its events, context, and the named actors, guards and actions the
 * chart in turn.machine.ts uses. Guards are pure (they read the context); effects are placeholders
 * that `src/runtime` provides.
 */

export type TurnEvent =
  | { type: 'ABORT' }
  | { type: 'STEERING_ARRIVED' }
  | { type: 'BATCH_SETTLED'; results: ResultsByPosition; interrupted: boolean; startedCallIds: string[] };

/**
 * Commands the tool batch actor accepts: HOLD (steering arrived: start no further call, settle
 * once the running ones end) and CANCEL (settle every unfinished call now).
 */
export type BatchCommand = { type: 'HOLD' } | { type: 'CANCEL'; reason: 'aborted' | 'steering' };

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
  /** A steering message was accepted during this turn: unless steering waits, no further tool call starts. */
  steeringArrived: boolean;
  /** Pre-turn injections: committed with this turn's input. */
  inputInjected: Message[];
  /** Later injections (pre-dispatch, post-turn): the next turn's input. */
  injected: Message[];
  assistantOverride: ModelReply['message'] | null;
}

const notProvided = (name: string) => () => {
  throw new Error(`agentchart: the runtime must provide the turn machine's "${name}"`);
};

export const EMPTY_RESULTS: ResultsByPosition = new Map();

export const turnSetup = setup({
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
    /** Resumed after a crash with a published reply that asks for tools: they continue (replay rules applied). */
    resumesWithPublishedToolCalls: ({ context }) =>
      context.resume?.reply != null && toolCallsOf(context.resume.reply.message).length > 0,
    /** Resumed after a crash with a published reply that asks for nothing: the turn ends as that reply did. */
    resumesWithPublishedReply: ({ context }) => context.resume?.reply != null,
    resumedReplyFailed: ({ context }) => context.resume?.reply?.message.stopReason === 'error',
    resumedReplyAborted: ({ context }) => context.resume?.reply?.message.stopReason === 'aborted',
    hasPreTurnPolicies: ({ context }) => context.features.preTurnPolicies,
    hasPreDispatchPolicies: ({ context }) => context.features.preDispatchPolicies,
    hasPostTurnPolicies: ({ context }) => context.features.postTurnPolicies,
    /** parallel / sequential / concurrency: only a custom partition can be invalid. */
    strategyCannotBeInvalid: ({ context }) => context.features.fixedPartition,
    steeringInterruptsTools: ({ context }) => context.features.steeringInterrupts,
    /** Steering arrived earlier in the turn (while the model streamed, a backoff, pre-turn policies) and interrupts. */
    steeringInterruptsBatch: ({ context }) => context.steeringArrived && context.features.steeringInterrupts,
    policyStopped: ({ context }) => context.stopped,
    replyWasAborted: ({ context }) => context.abortRequested || context.reply?.error?.kind === 'aborted',
    // A re-run continues the same logical message, so an attempt whose text was already shown (live
    // streaming) can never be redone: its failure is final.
    overflowIsRecoverable: ({ context }) =>
      context.reply?.error?.kind === 'contextOverflow' && !context.reply.published && context.overflowRecoveryAvailable,
    errorIsRetryable: ({ context }) => context.reply?.error?.retryable === true && !context.reply.published && context.retryAvailable,
    fallbackCanTakeOver: ({ context }) => context.reply?.error != null && !context.reply.published && context.fallbackAvailable,
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
    /** A turn resumed after a crash continues from the reply it had published, with the results known then. */
    takeResumedReply: assign(({ context }) => ({
      reply: context.resume?.reply ?? null,
      results: context.resume?.results ?? EMPTY_RESULTS,
    })),
    noteSteering: assign({ steeringArrived: true }),
    endTurnAs: assign((_, params: { reason: TurnEndReason }) => ({ endReason: params.reason })),
    settleUnfinishedCalls: assign(({ context }, params: UnfinishedReason) => ({
      results: settleUnfinished(context.reply?.message ?? null, context.results, params),
    })),
    cancelToolBatch: sendTo('toolBatch', (_, params: Extract<BatchCommand, { type: 'CANCEL' }>) => params),
    holdToolBatch: sendTo('toolBatch', { type: 'HOLD' } satisfies BatchCommand),
  },
  delays: {
    /** How long unfinished tools get to finish after steering arrives, before they are cancelled. */
    steeringGrace: ({ context }) => context.features.steeringGraceMs,
  },
});

export function turnOutputOf(context: TurnContext): TurnOutput {
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
