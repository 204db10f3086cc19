import {
  assertEvent,
  assign,
  fromCallback,
  fromPromise,
  setup,
  stateIn,
  type AnyActorRef,
  type EventObject,
} from 'xstate';
import type { Message } from '../src/domain/messages.js';
import { toolCallsOf } from '../src/domain/messages.js';
import type { ToolCallInput, ToolCallOutput } from './tool-call.machine.js';
import { settle, settledFrom, settleUnfinished, unfinishedText, type UnfinishedReason } from './tool-results.js';
import {
  afterCallFinished,
  callSystemId,
  dispatchedIndices,
  finishesBatch,
  fixedGroups,
  openBatch,
} from './turn.batch.js';
import {
  approves,
  awaitingApproval,
  awaitingCall,
  callDecided,
  keptAnswers,
  requestsOut,
  verdictApplied,
  type ApprovalResolution,
} from './turn.approvals.js';
import { ended, outputOf, replyOf, resumedEnding, type TurnContext, type TurnEvent } from './turn.context.js';
import type {
  ApprovalVerdict,
  PartitionOutput,
  PreDispatchOutput,
  PreparedCall,
  PreprocessOutput,
  ResponseOutput,
  Batch,
  ModelReply,
  Settled,
  TurnEnding,
  TurnInput,
  TurnOutput,
} from './turn.types.js';

export type { TurnContext, TurnEvent } from './turn.context.js';

/**
 * The turn machine's vocabulary: the named actors, guards and actions the chart in turn.machine.ts
 * uses. Guards are pure (they read the context and the event); effects are placeholders that
 * `src/runtime` provides. Tool calls are child actors of the turn, created by `startCalls`.
 */

const notProvided = (name: string) => () => {
  throw new Error(`agentchart: the runtime must provide the turn machine's "${name}"`);
};

const effect = <TOutput, TInput>(name: string) => fromPromise<TOutput, TInput>(notProvided(name));

export const turnSetup = setup({
  types: {
    context: {} as TurnContext,
    events: {} as TurnEvent,
    input: {} as TurnInput,
    output: {} as TurnOutput,
  },
  actors: {
    runPreTurnPolicies: effect<
      { stopped: boolean; injected: Message[] },
      { turnIndex: number; newMessages: Message[] }
    >('runPreTurnPolicies'),
    callModel: effect<ModelReply, Pick<TurnInput, 'turnIndex' | 'attempt' | 'overflowView' | 'modelIndex'>>(
      'callModel',
    ),
    /** Validates the calls against the tool registry: unknown tools and invalid arguments get their error result. */
    prepareToolCalls: effect<
      PreprocessOutput,
      {
        turnIndex: number;
        reply: ModelReply;
        decided: number[];
        approved: string[];
        approvedArguments: Record<string, Record<string, unknown>>;
      }
    >('prepareToolCalls'),
    runPreDispatchPolicies: effect<PreDispatchOutput, { turnIndex: number; prepared: PreparedCall[] }>(
      'runPreDispatchPolicies',
    ),
    /**
     * Asks about every call awaiting approval at once: sends APPROVAL_REQUESTED once the step is over,
     * then the handler's verdict on each call (already checked: a throw is `failed`) as APPROVAL_VERDICT,
     * in whatever order they come; a stored session's answers come as APPROVAL_DECIDED instead.
     */
    askApproval: fromCallback<EventObject, { turnIndex: number; calls: PreparedCall[] }>(notProvided('askApproval')),
    /** The custom `partition(calls)`: groups of prepared-call indices, or why they are invalid. */
    partitionCalls: effect<PartitionOutput, { prepared: PreparedCall[] }>('partitionCalls'),
    runPostTurnPolicies: effect<ResponseOutput, Pick<TurnOutput, 'assistant' | 'toolResults'> & { turnIndex: number }>(
      'runPostTurnPolicies',
    ),
  },
  guards: {
    isContinuationAttempt: ({ context }) => context.input.attempt !== 'fresh',
    /** Resumed after a crash with the reply and its results committed: only the turnEnd is missing. */
    resumesCommittedTurn: ({ context }) => context.input.resume?.committed === true,
    /** Resumed after a crash with a published reply: its tools continue (replay rules applied). */
    resumesWithPublishedReply: ({ context }) => context.input.resume?.reply != null,
    /** …and the reply asks for tools that have not all run: they continue. */
    resumesWithToolsToRun: ({ context }) =>
      resumedEnding(context.input.resume?.reply ?? null).turnEndReason === 'toolsExecuted',
    hasPreTurnPolicies: ({ context }) => context.input.features.preTurnPolicies,
    hasPreDispatchPolicies: ({ context }) => context.input.features.preDispatchPolicies,
    hasPostTurnPolicies: ({ context }) => context.input.features.postTurnPolicies,
    preTurnPolicyStopped: ({ event }) => replyOf<{ stopped: boolean }>(event).stopped,
    steeringInterruptsTools: ({ context }) => context.input.features.steeringInterrupts,
    /** Steering arrived earlier in the turn (the model stream, a backoff, pre-turn policies) and interrupts. */
    steeringInterruptsBatch: ({ context }) => steeringInterrupts(context),
    /** The ABORT arrived while the model streamed: whatever the reply says, the turn ends aborted. */
    abortArrivedWhileStreaming: stateIn('#turn.ASSISTANT.abortRequested'),
    /** The run was aborted before the model was called: there is no message to publish. */
    modelNotCalled: ({ event }) => !replyOf<ModelReply>(event).called,
    replyWasAborted: ({ event }) => {
      const reply = replyOf<ModelReply>(event);
      return reply.error?.kind === 'aborted' || reply.message.stopReason === 'aborted';
    },
    // A re-run continues the same logical message, so an attempt whose text was already shown (live
    // streaming) can never be redone: its failure is final.
    overflowIsRecoverable: ({ context, event }) => {
      const reply = replyOf<ModelReply>(event);
      return reply.error?.kind === 'contextOverflow' && !reply.published && context.input.overflowRecoveryAvailable;
    },
    errorIsRetryable: ({ context, event }) => {
      const reply = replyOf<ModelReply>(event);
      return reply.error?.retryable === true && !reply.published && context.input.retryAvailable;
    },
    fallbackCanTakeOver: ({ context, event }) => {
      const reply = replyOf<ModelReply>(event);
      return reply.error != null && !reply.published && context.input.fallbackAvailable;
    },
    replyFailed: ({ event }) => replyOf<ModelReply>(event).error != null,
    replyHasToolCalls: ({ event }) => toolCallsOf(replyOf<ModelReply>(event).message).length > 0,
    /** The reply asks for tools, nothing is to be checked before dispatch, a fixed strategy: its calls start at once. */
    replyRunsAtOnce: ({ context, event }) => {
      const prepared = replyOf<ModelReply>(event).prepared?.prepared;
      return prepared !== undefined && !steeringInterrupts(context) && runsAtOnce(context, prepared);
    },
    /** Nothing to check before dispatch and a fixed strategy: the prepared calls start at once. */
    preparedRunAtOnce: ({ context }) => runsAtOnce(context, context.prepared),
    preDispatchStopped: ({ event }) => replyOf<PreDispatchOutput>(event).kind === 'stop',
    hasCallsAwaitingApproval: ({ context }) => awaitingApproval(context).length > 0,
    /** Every call of the batch that waited for approval has its decision. */
    everyApprovalDecided: ({ context }) => awaitingApproval(context).length === 0,
    /** An approval rewrote arguments: those calls clear pre-dispatch again before anything starts. */
    rewrittenCallsNeedPreDispatch: ({ context }) =>
      context.input.features.preDispatchPolicies && context.prepared.some((entry) => !entry.cleared),
    /** The handler's verdict is on a call that still waits (never twice for one call). */
    verdictForAwaitingCall: ({ context, event }) => {
      assertEvent(event, 'APPROVAL_VERDICT');
      return awaitingCall(context, event.toolCallId) !== null;
    },
    verdictApproves: ({ context, event }) => {
      assertEvent(event, 'APPROVAL_VERDICT');
      return awaitingCall(context, event.toolCallId) !== null && approves(event.verdict);
    },
    /** Every call awaiting approval has its request published (in this attempt, or before a restart). */
    everyApprovalRequested: ({ context }) =>
      awaitingApproval(context).every(({ call }) => context.asked.includes(call.id)),
    /**
     * Some request is out and undecided, published here or before a restart (a turn resumed by another
     * handle waits for it without publishing it again): a withdrawal resolves each such one as denied.
     */
    approvalRequestsOut: ({ context }) => requestsOut(context).length > 0,
    /** A kept `resolveApproval` answer decides a call that waits (it may have come before the turn got here). */
    keptDecisionArrived: ({ context }) => keptAnswers(context).length > 0,
    usesCustomPartition: ({ context }) => context.input.features.execution.kind === 'custom',
    partitionIsInvalid: ({ event }) => 'invalid' in replyOf<PartitionOutput>(event),
    nothingToRun: ({ context }) => context.prepared.length === 0,
    /** The call that just finished was the last one of the batch. */
    batchFinishes: ({ context }) => finishesBatch(context.batch),
    turnWasAborted: ({ context }) => ended(context).kind === 'aborted',
  },
  actions: {
    announceTurnStart: notProvided('announceTurnStart'),
    /**
     * Creates the tool-call actors of the calls the batch starts in this step (`batch.starting`):
     * children of the turn in its actor system. They are not kept in the turn's children map (XState
     * copies it at every change, which makes a batch of 1,000 quadratic); a finished one is stopped
     * by XState and dropped, so memory stays linear.
     */
    startCalls: notProvided('startCalls'),
    commitTurnInput: notProvided('commitTurnInput'),
    publishAssistantMessage: notProvided('publishAssistantMessage'),
    /** Commits the assistant message and every result in call order (publishing the synthetic ones). */
    commitTurn: notProvided('commitTurn'),
    announceTurnEnd: notProvided('announceTurnEnd'),
    /** toolApprovalRequested for the call APPROVAL_REQUESTED names (unless it was published before a restart). */
    announceApprovalRequest: notProvided('announceApprovalRequest'),
    announceApprovalResolved: (_args: unknown, _params: ApprovalResolution) =>
      notProvided('announceApprovalResolved')(),
    /** Abort or steering: each published request still undecided is resolved as denied, in call order. */
    withdrawApprovals: notProvided('withdrawApprovals'),
    /** A call the user or a policy refused: counted in toolCallsRejected. */
    countRejectedCall: notProvided('countRejectedCall'),

    endTurnAs: assign((_, params: TurnEnding) => ({ ending: params })),
    noteSteering: assign({ steered: true }),
    /**
     * The reply, and its calls as the effect prepared them (unknown tools and invalid arguments
     * settled); with `ending`, the turn's decision in the same copy of the context.
     */
    recordReply: assign(({ context, event }, params: { ending: TurnEnding } | undefined) =>
      replyRecorded(context, event, params?.ending),
    ),
    /** The reply recorded and its calls started at once (the hot path of a tool turn: one copy of the context). */
    recordReplyAndStartBatch: assign(({ context, event }) => {
      const recorded = replyRecorded(context, event);
      return { ...recorded, batch: batchFor(context.input, recorded.prepared ?? context.prepared) };
    }),
    recordPreTurnInjections: assign({ inputInjected: ({ event }) => replyOf<{ injected: Message[] }>(event).injected }),
    /** Resumed with a published reply: the reply and the results decided before the restart. */
    recordResumedReply: assign(({ context }) => ({
      reply: context.input.resume?.reply ?? null,
      settled: context.input.resume ? settledFrom(context.input.resume.results, context.input.resume.notRerun) : null,
    })),
    recordPrepared: assign(({ context, event }) => prepared(context, replyOf<PreprocessOutput>(event))),
    /** Pre-dispatch's decision: the calls that cleared go on, or a policy stopped the batch and the turn ends. */
    recordPreDispatch: assign(({ context, event }) => {
      const output = replyOf<PreDispatchOutput>(event);
      let settled = context.settled;
      for (const { position, result } of output.skipped) settled = settle(settled, position, result);
      const injected = [...context.injected, ...output.injected];
      if (output.kind === 'continue') return { prepared: output.prepared, settled, injected };
      const reason: UnfinishedReason = { kind: 'stopped', reason: output.reason };
      return {
        prepared: output.prepared,
        settled: settleUnfinished(context.reply, settled, reason),
        injected,
        ending: { kind: 'finished', detail: 'stopped', turnEndReason: 'stopped', error: null } satisfies TurnEnding,
      };
    }),
    /** The handler's verdict on one of the calls asked. */
    recordVerdict: assign(({ context, event }) => {
      assertEvent(event, 'APPROVAL_VERDICT');
      return verdictApplied(context, event.toolCallId, event.verdict);
    }),
    /** A call a kept answer decides: approved (maybe with new arguments), or settled as refused. */
    decideCall: assign(({ context }, params: { asked: PreparedCall; verdict: ApprovalVerdict }) =>
      callDecided(context, params.asked, params.verdict),
    ),
    noteApprovalAsked: assign(({ context, event }) => {
      assertEvent(event, 'APPROVAL_REQUESTED');
      return context.asked.includes(event.toolCallId) ? {} : { asked: [...context.asked, event.toolCallId] };
    }),
    /** A `resolveApproval` answer, kept until the turn decides that call (the first answer for a call wins). */
    keepDecision: assign({
      decisions: ({ context, event }) => {
        assertEvent(event, 'APPROVAL_DECIDED');
        const { toolCallId, verdict } = event;
        const known = context.decisions.some((decision) => decision.toolCallId === toolCallId);
        return known ? context.decisions : [...context.decisions, { toolCallId, verdict }];
      },
    }),
    /** Opens the batch: groups per the strategy; its first calls start. */
    startBatch: assign(({ context }) => ({ batch: batchFor(context.input, context.prepared) })),
    /**
     * The custom partition's answer: its groups open the batch (no limit within a group), or it is invalid:
     * nothing starts and every call is settled with why.
     */
    recordPartition: assign(({ context, event }) => {
      const output = replyOf<PartitionOutput>(event);
      if ('groups' in output) return { batch: openBatch(output.groups, Number.POSITIVE_INFINITY) };
      const reason: UnfinishedReason = { kind: 'invalidPartition', reason: output.invalid };
      return {
        ending: { kind: 'success', turnEndReason: 'toolsExecuted', error: null } satisfies TurnEnding,
        settled: settleUnfinished(context.reply, context.settled, reason),
      };
    }),
    /** A call finished: its result is recorded and the next calls start in its place. */
    recordCallResult: assign(({ context, event }) => {
      const settled = callSettled(context, event);
      return context.batch ? { settled, batch: afterCallFinished(context.batch) } : { settled };
    }),
    /** The last call of the batch finished: its result recorded and the turn's decision, in one copy of the context. */
    finishBatch: assign(({ context, event }, params: TurnEnding) => ({
      settled: callSettled(context, event),
      ending: params,
    })),
    /** Steering or abort: no call starts from now on; the running ones finish by themselves or when cancelled. */
    holdBatch: assign(({ context }) => ({ batch: context.batch ? { ...context.batch, limit: 0 } : null })),
    /** Tells each running tool-call actor to stop: it settles at once with `result`, even if its tool ignores the signal. */
    cancelRunningCalls: ({ context, self }, params: { result: string }) =>
      tellRunningCalls(context, self, { type: 'CANCEL', ...params }),
    /** Steering: a call that has not started yet never starts (a started one runs on for the grace period). */
    holdStartingCalls: ({ context, self }) =>
      tellRunningCalls(context, self, { type: 'HOLD', result: unfinishedText({ kind: 'steeringSkipped' }) }),
    settleUnfinishedCalls: assign(({ context }, params: UnfinishedReason) => ({
      settled: settleUnfinished(context.reply, context.settled, params),
    })),
    /** After a cancellation the calls that never started are settled as the turn ended: aborted, or skipped by steering. */
    settleCancelledBatch: assign(({ context }) => ({
      settled: settleUnfinished(context.reply, context.settled, {
        kind: ended(context).kind === 'aborted' ? 'aborted' : 'steeringSkipped',
      }),
    })),
    /** Pre-turn policies said Stop before anything was announced. */
    recordPreTurnStop: assign({
      ending: { kind: 'finished', detail: 'stopped', turnEndReason: null, error: null } satisfies TurnEnding,
    }),
    recordPostTurn: assign(({ context, event }) => {
      const output = replyOf<ResponseOutput>(event);
      // A stop keeps the reason the turn ended for (on a turn a policy stopped already, it decides nothing new).
      return {
        injected: [...context.injected, ...output.injected],
        assistant: output.assistant ?? context.assistant,
        ...(output.stopped
          ? {
              ending: {
                kind: 'finished',
                detail: 'stopped',
                turnEndReason: ended(context).turnEndReason,
                error: null,
              } satisfies TurnEnding,
            }
          : {}),
      };
    }),
    /** A turn resumed after a restart with its reply published ends as that reply did (nothing left to run). */
    endAsResumedReply: assign(({ context }) => {
      const ending = resumedEnding(context.reply);
      const reason: UnfinishedReason = { kind: ending.kind === 'aborted' ? 'aborted' : 'replyFailed' };
      return { ending, settled: settleUnfinished(context.reply, context.settled, reason) };
    }),
  },
  delays: {
    /** How long unfinished tools get to finish after steering arrives, before they are cancelled. */
    steeringGrace: ({ context }) => context.input.features.steeringGraceMs,
  },
});

const steeringInterrupts = (context: TurnContext) => context.steered && context.input.features.steeringInterrupts;

function runsAtOnce(context: TurnContext, calls: readonly PreparedCall[]): boolean {
  const { features } = context.input;
  return (
    calls.length > 0 &&
    !features.preDispatchPolicies &&
    features.execution.kind !== 'custom' &&
    calls.every((entry) => entry.approved)
  );
}

function replyRecorded(context: TurnContext, event: { type: string }, ending?: TurnEnding): Partial<TurnContext> {
  const reply = replyOf<ModelReply>(event);
  const calls = reply.prepared ? prepared(context, reply.prepared) : {};
  return ending ? { reply, ...calls, ending } : { reply, ...calls };
}

/** Groups per the strategy, and the calls that start at once. */
function batchFor(input: TurnInput, prepared: readonly PreparedCall[]): Batch {
  const fixed = fixedGroups(input.features.execution, prepared.length);
  return openBatch(fixed.groups, fixed.limit);
}

function callSettled(context: TurnContext, event: { type: string }): Settled {
  const { position, result, started } = replyOf<ToolCallOutput>(event);
  return settle(context.settled, position, result, true, started);
}

function prepared(context: TurnContext, output: PreprocessOutput): Pick<TurnContext, 'prepared' | 'settled'> {
  let settled = context.settled;
  for (const { position, result } of output.invalid) settled = settle(settled, position, result);
  return { prepared: output.prepared, settled };
}

/** The input of a prepared call's tool-call actor. */
export function callInput(context: TurnContext, entry: PreparedCall): ToolCallInput {
  const announced = context.input.resume?.startedCallIds.includes(entry.call.id) ?? false;
  const { position, call, timeoutMs } = entry;
  return { turnIndex: context.input.turnIndex, position, call, timeoutMs, announced };
}

/** The prepared calls whose tool-call actor runs (created, not settled yet). */
function runningCalls(context: TurnContext): PreparedCall[] {
  const decided = new Set<number>();
  for (let cell = context.settled; cell; cell = cell.rest) decided.add(cell.position);
  return dispatchedIndices(context.batch)
    .map((index) => context.prepared[index] as PreparedCall)
    .filter((entry) => !decided.has(entry.position));
}

/**
 * Sends a command to each running tool-call actor, at once (not after the step, like `sendTo`): each
 * settles before the turn's next event, so a cancelled tool that ignores its signal never holds the turn.
 */
function tellRunningCalls(
  context: TurnContext,
  self: AnyActorRef,
  command: { type: 'CANCEL' | 'HOLD'; result: string },
): void {
  for (const entry of runningCalls(context)) self.system.get(callSystemId(self.sessionId, entry))?.send(command);
}

export { ended, outputOf };
