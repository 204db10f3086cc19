import { assign } from 'xstate';
import { resultsInCallOrder } from '../../machines/tool-results.js';
import { turnMachine, type TurnContext } from '../../machines/turn.machine.js';
import { createCallModel } from './model-call.js';
import { createPostTurnRunner, createPreTurnRunner } from './policy-slots.js';
import { runOf } from './run-registry.js';
import type { RunSession } from './run-session.js';
import { createToolBatch, provideToolCallMachine } from './tool-batch.js';
import { createApprovalRunner } from './approvals.js';
import { createPreDispatchRunner, planGroups, prepareCalls } from './tool-phases.js';

/** The turn machine wired to the runtime; each effect finds its run through the actor system. */
export function provideTurnMachine() {
  return turnMachine.provide({
    actors: {
      runPreTurnPolicies: createPreTurnRunner(),
      callModel: createCallModel(),
      runPreDispatchPolicies: createPreDispatchRunner(),
      requestApprovals: createApprovalRunner(),
      executeToolCalls: createToolBatch(provideToolCallMachine()),
      runPostTurnPolicies: createPostTurnRunner(),
    },
    actions: {
      announceTurnStart: ({ context, system }) => runOf(system).startTurn(context.turnIndex, context.newMessages),
      commitTurnInput: ({ context, system }) => runOf(system).commit([...context.newMessages, ...context.inputInjected], context.turnIndex),
      publishAssistantMessage: ({ context, system }) => {
        if (!context.reply) return;
        runOf(system).publishAssistant(context.reply.message, context.reply);
      },
      commitTurn: ({ context, system }) => {
        const run = runOf(system);
        const assistant = context.reply?.message ?? null;
        run.turn.committedAssistant = assistant;
        if (!assistant) return;
        const results = resultsInCallOrder(assistant, context.results);
        // Synthetic results (invalid, skipped, rejected, stopped, aborted) are announced here, in call order.
        for (const result of results) run.announceToolEnd(result);
        run.turn.replyStart = run.agent.history.length;
        run.commit([assistant, ...results]);
      },
      announceTurnEnd: ({ context, system }) => announceTurnEnd(runOf(system), context),
      denyPendingApproval: ({ system }) => runOf(system).turn.denyPendingApproval?.(),
      prepareToolCalls: assign(({ context, system }) => prepareCalls(runOf(system), context)),
      planDispatch: assign(({ context, system }) => planGroups(runOf(system), context.prepared)),
    },
  });
}

function announceTurnEnd(run: RunSession, context: TurnContext): void {
  const assistant = context.assistantOverride ?? context.reply?.message ?? null;
  // Closed before turnEnd is published: the checkpoint taken on turnEnd must not see an open turn.
  run.closeTurn();
  run.emit({
    type: 'turnEnd',
    turnIndex: context.turnIndex,
    reason: context.endReason ?? 'complete',
    assistant,
    toolResults: resultsInCallOrder(context.reply?.message ?? null, context.results),
  });
}
