import { assign } from 'xstate';
import { resultsInCallOrder } from '../../machines/tool-results.js';
import { turnMachine, type TurnContext } from '../../machines/turn.machine.js';
import type { AssistantMessage } from '../domain/messages.js';
import { createCallModel } from './model-call.js';
import type { AgentOptions } from './options.js';
import { createPostTurnRunner, createPreTurnRunner } from './policy-slots.js';
import type { RunSession } from './run-session.js';
import { createToolBatch, provideToolCallMachine } from './tool-batch.js';
import { createApprovalRunner, createPreDispatchRunner, planGroups, prepareCalls } from './tool-phases.js';

/** The turn machine wired to an agent's runtime. `currentRun` is the agent's run in progress. */
export function provideTurnMachine(currentRun: () => RunSession, options: AgentOptions) {
  const policies = options.policies ?? {};
  let committedAssistant: AssistantMessage | null = null;
  const toolCallLogic = provideToolCallMachine(currentRun);

  return turnMachine.provide({
    actors: {
      runPreTurnPolicies: createPreTurnRunner(currentRun),
      callModel: createCallModel(currentRun),
      runPreDispatchPolicies: createPreDispatchRunner(currentRun),
      requestApprovals: createApprovalRunner(currentRun),
      executeToolCalls: createToolBatch(currentRun, toolCallLogic, options),
      runPostTurnPolicies: createPostTurnRunner(currentRun, () => committedAssistant),
    },
    guards: {
      hasPreTurnPolicies: () => (policies.preTurn?.length ?? 0) > 0,
      hasPreDispatchPolicies: () => (policies.preDispatch?.length ?? 0) > 0,
      hasPostTurnPolicies: () => (policies.postTurn?.length ?? 0) > 0,
      steeringInterruptsTools: () => currentRun().agent.resolved.steeringInterrupts,
      hasCallsAwaitingApproval: ({ context }) => context.prepared.some((entry) => !entry.approved),
    },
    actions: {
      announceTurnStart: ({ context }) => currentRun().startTurn(context.turnIndex),
      commitTurnInput: ({ context }) => currentRun().commit([...context.newMessages, ...context.inputInjected]),
      publishAssistantMessage: ({ context }) => {
        if (context.reply) currentRun().publishAssistant(context.reply.message);
      },
      commitTurn: ({ context }) => {
        const run = currentRun();
        committedAssistant = context.reply?.message ?? null;
        if (!committedAssistant) return;
        const results = resultsInCallOrder(committedAssistant, context.results);
        // Synthetic results (invalid, skipped, rejected, stopped, aborted) are announced here, in call order.
        for (const result of results) run.announceToolEnd(result);
        run.turn.replyStart = run.agent.history.length;
        run.commit([committedAssistant, ...results]);
      },
      announceTurnEnd: ({ context }) => announceTurnEnd(currentRun(), context),
      denyPendingApproval: () => currentRun().turn.denyPendingApproval?.(),
      prepareToolCalls: assign(({ context }) => prepareCalls(currentRun(), context)),
      planDispatch: assign(({ context }) => planGroups(currentRun(), context.prepared)),
    },
    delays: {
      steeringGrace: () => currentRun().agent.resolved.steeringGraceMs,
    },
  });
}

function announceTurnEnd(run: RunSession, context: TurnContext): void {
  const assistant = context.assistantOverride ?? context.reply?.message ?? null;
  run.emit({
    type: 'turnEnd',
    turnIndex: context.turnIndex,
    reason: context.endReason ?? 'complete',
    assistant,
    toolResults: resultsInCallOrder(context.reply?.message ?? null, context.results),
  });
  run.turn.open = false;
}
