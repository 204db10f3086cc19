import { createActor, type AnyActorRef } from 'xstate';
import { awaitingCall, requestsOut, type ApprovalResolution } from '../../machines/turn.approvals.js';
import { outputOf, type TurnContext } from '../../machines/turn.context.js';
import { callActorId, callSystemId } from '../../machines/turn.batch.js';
import { callInput } from '../../machines/turn.setup.js';
import type { PreparedCall } from '../../machines/turn.types.js';
import { turnMachine } from '../../machines/turn.machine.js';
import { resultsInCallOrder, syntheticInCallOrder } from '../../machines/tool-results.js';
import type { Message } from '../domain/messages.js';
import { createApprovalAsker } from './approvals.js';
import { fromSync } from './effect-actors.js';
import { createCallModel } from './model-call.js';
import { createPostTurnRunner, createPreTurnRunner } from './policy-slots.js';
import { runAction, runDeps, type RunDeps } from './run-registry.js';
import { emptyMessage } from './run-session.js';
import { provideToolCallLogic } from './tool-call-effects.js';
import { publishedArguments } from './published-arguments.js';
import { createPreDispatchRunner, partitionCalls, prepareCalls } from './tool-phases.js';
import { publishTurnEnd } from './turn-end.js';
import type { RuntimeImplementations } from './machine-names.js';

/** The turn machine's actions that are its own (context updates): every other one is the runtime's to provide. */
export type TurnOwnActions =
  | 'endTurnAs'
  | 'noteSteering'
  | 'recordReply'
  | 'recordReplyAndStartBatch'
  | 'recordPreTurnInjections'
  | 'recordResumedReply'
  | 'recordPrepared'
  | 'recordPreDispatch'
  | 'recordVerdict'
  | 'decideCall'
  | 'noteApprovalAsked'
  | 'keepDecision'
  | 'startBatch'
  | 'recordPartition'
  | 'recordCallResult'
  | 'finishBatch'
  | 'holdBatch'
  | 'cancelRunningCalls'
  | 'holdStartingCalls'
  | 'settleUnfinishedCalls'
  | 'settleCancelledBatch'
  | 'recordPreTurnStop'
  | 'recordPostTurn'
  | 'endAsResumedReply';

type Turn = typeof turnMachine;

/** The turn machine wired to the runtime; each effect finds its run through the actor system. */
export function provideTurnMachine() {
  return turnMachine.provide({ actors: turnActors(), actions: turnActions() });
}

function turnActors() {
  return {
    runPreTurnPolicies: createPreTurnRunner(),
    callModel: createCallModel(),
    prepareToolCalls: fromSync(({ input, system }) => prepareCalls(runDeps(system), input, false)),
    runPreDispatchPolicies: createPreDispatchRunner(),
    askApproval: createApprovalAsker(),
    partitionCalls: fromSync(({ input, system }) => partitionCalls(runDeps(system), input.prepared)),
    runPostTurnPolicies: createPostTurnRunner(),
  } satisfies RuntimeImplementations<Turn, 'actors'>;
}

function turnActions() {
  return {
    announceTurnStart: runAction((run, { context }) =>
      startTurn(run, context.input.turnIndex, context.input.newMessages),
    ),
    startCalls: runAction((run, { context, self }) => startCalls(run, context, self)),
    commitTurnInput: runAction((run, { context }) =>
      run.commit([...context.input.newMessages, ...context.inputInjected], context.input.turnIndex),
    ),
    publishAssistantMessage: runAction((run, { context }) => publishAssistant(run, context)),
    commitTurn: runAction((run, { context }) => commitTurn(run, context)),
    announceTurnEnd: runAction((run, { context }) => {
      const output = outputOf(context);
      const turnIndex = context.input.turnIndex;
      publishTurnEnd(run, {
        turnIndex,
        reason: output.turnEndReason ?? 'complete',
        assistant: output.assistant,
        toolResults: output.toolResults,
      });
    }),
    announceApprovalRequest: runAction((run, { context, event }) => {
      const call = event.type === 'APPROVAL_REQUESTED' ? awaitingCall(context, event.toolCallId)?.call : undefined;
      // A request published before a restart is not published twice.
      if (!call || context.asked.includes(call.id)) return;
      const { id: toolCallId, name: toolName, arguments: args } = call;
      run.emit({
        type: 'toolApprovalRequested',
        turnIndex: context.input.turnIndex,
        toolCallId,
        toolName,
        arguments: publishedArguments(args),
      });
    }),
    announceApprovalResolved: runAction((run, { context }, params: ApprovalResolution) =>
      resolveApproval(run, context, params),
    ),
    withdrawApprovals: runAction((run, { context }) => {
      for (const { call } of requestsOut(context))
        resolveApproval(run, context, { toolCallId: call.id, toolName: call.name, approved: false });
    }),
    countRejectedCall: runAction((run) => run.ledger.increment('toolCallsRejected')),
  } satisfies RuntimeImplementations<Turn, 'actions', TurnOwnActions>;
}

const toolCallLogic = provideToolCallLogic();

function resolveApproval(run: RunDeps, context: TurnContext, { toolCallId, toolName, approved }: ApprovalResolution) {
  run.emit({ type: 'toolApprovalResolved', turnIndex: context.input.turnIndex, toolCallId, toolName, approved });
}

/** The tool-call actors of the calls the batch starts in this step: children of the turn, in its system. */
function startCalls(run: RunDeps, context: TurnContext, self: AnyActorRef): void {
  if (run.callActors.turn !== self.sessionId) run.callActors = { turn: self.sessionId, actors: [] };
  for (const index of context.batch?.starting ?? []) {
    const entry = context.prepared[index] as PreparedCall;
    const options = {
      parent: self,
      id: callActorId(entry),
      systemId: callSystemId(self.sessionId, entry),
      input: callInput(context, entry),
    };
    const actor = createActor(toolCallLogic, options);
    run.callActors.actors.push(actor);
    actor.start();
  }
}

/** turnStart; between turns only, a tool source's new list is taken (a turn sees one list from start to end). */
function startTurn(run: RunDeps, turnIndex: number, input: readonly Message[]): void {
  const change = run.agent.toolSources.next(run.agent.registry);
  if (change) {
    run.agent.registry = change.registry;
    run.emit({ type: 'toolsChanged', added: change.added, removed: change.removed, updated: change.updated });
  }
  const steeringDelivered = input.filter((message) => run.agent.sources.get(message) === 'steering').length;
  run.emit({ type: 'turnStart', turnIndex, ...(steeringDelivered > 0 ? { steeringDelivered } : {}) });
}

/**
 * Publishes the reply once per logical message: start (unless streaming live already did), the
 * attempt's deltas, end (with the attempt's error).
 */
function publishAssistant(run: RunDeps, context: TurnContext): void {
  const reply = context.reply;
  if (!reply) return;
  const turnIndex = context.input.turnIndex;
  const live = run.live;
  run.live = null;
  if (!live?.open) run.emit({ type: 'messageStart', turnIndex, message: emptyMessage(reply.message.model) });
  for (const delta of reply.deltas) run.emit({ type: 'messageUpdate', turnIndex, delta });
  const error = reply.error;
  run.emit({ type: 'messageEnd', turnIndex, message: reply.message, ...(error ? { error } : {}) });
}

/** Commits the assistant message and its results in call order; the synthetic results are published here. */
function commitTurn(run: RunDeps, context: TurnContext): void {
  const assistant = context.reply?.message ?? null;
  if (!assistant) return;
  const turnIndex = context.input.turnIndex;
  for (const result of syntheticInCallOrder(assistant, context.settled)) {
    const { toolCallId, toolName, content, isError } = result;
    run.emit({ type: 'toolExecutionEnd', turnIndex, toolCallId, toolName, result: content, isError });
  }
  run.commit([assistant, ...resultsInCallOrder(assistant, context.settled)], turnIndex);
}
