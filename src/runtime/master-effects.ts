import { assign, fromPromise } from 'xstate';
import { masterMachine } from '../../machines/master.machine.js';
import type { MasterContext } from '../../machines/master.types.js';
import { modelError } from '../domain/errors.js';
import type { AssistantMessage } from '../domain/messages.js';
import type { AgentOptions } from './options.js';
import { createPostLoopRunner } from './policy-slots.js';
import { backoffDelay } from './retry.js';
import type { RunSession } from './run-session.js';
import { provideTurnMachine } from './turn-effects.js';

export const REPORT_GUIDANCE =
  'You did not call any tool. Continue the task with the tools available, and call the final report tool when you are done.';

/** The master machine wired to an agent's runtime. */
export function provideMasterMachine(currentRun: () => RunSession, options: AgentOptions, onEnded: (context: MasterContext) => void) {
  const reportTool = options.finalReport?.toolName;
  return masterMachine.provide({
    actors: {
      turn: provideTurnMachine(currentRun, options),
      runPostLoopPolicies: createPostLoopRunner(currentRun),
      recoverFromOverflow: fromPromise<{ recovered: boolean }, { turnIndex: number }>(async ({ input }) => {
        const run = currentRun();
        const { agent } = run;
        const prepared = await agent.guard.prepare(agent.history.slice(), { overflow: true, systemPrompt: options.systemPrompt, tools: agent.registry.specs() });
        if (run.ended || run.signal.aborted) return { recovered: false };
        if (!prepared.ok) {
          run.reportPolicyError('postTurn', new Error(prepared.error.message));
          return { recovered: false };
        }
        run.turn.overflowView = prepared.messages;
        const size = (messages: number) => ({ messages, tokens: agent.guard?.estimate(prepared.messages) ?? 0 });
        const compacted = prepared.compacted ?? { before: size(agent.history.length), after: size(prepared.messages.length) };
        run.ledger.increment('overflowRecoveries');
        run.emit({ type: 'contextCompacted', turnIndex: input.turnIndex, ...compacted });
        return { recovered: true };
      }),
    },
    guards: {
      hasPostLoopPolicies: () => (options.policies?.postLoop?.length ?? 0) > 0,
      finalReportAccepted: ({ context }) => {
        const outcome = context.lastOutcome;
        return !!outcome && outcome.toolResults.some((result) => result.toolName === reportTool && !result.isError && wasExecuted(currentRun(), result.toolCallId));
      },
      turnDidWork: ({ context }) => {
        const run = currentRun();
        const outcome = context.lastOutcome;
        if (!outcome) return false;
        return outcome.toolResults.some((result) => {
          const tool = run.agent.registry.get(result.toolName);
          return !!tool && !tool.progress && wasExecuted(run, result.toolCallId);
        });
      },
    },
    actions: {
      announceAgentStart: () => currentRun().emit({ type: 'agentStart' }),
      announceAgentEnd: ({ context }) => onEnded(context),
      announceRetry: ({ context }) => {
        const run = currentRun();
        const error = context.lastOutcome?.error;
        if (error) run.emit({ type: 'retry', turnIndex: context.turnIndex, attempt: context.attemptsOnModel, delayMs: context.retryDelayMs, error });
      },
      announceModelFallback: ({ context }) => {
        const run = currentRun();
        const from = run.model.name;
        run.modelIndex = context.modelIndex;
        run.emit({ type: 'modelFallback', turnIndex: context.turnIndex, from, to: run.model.name });
      },
      closeOpenTurnAsAborted: () => currentRun().closeTurnAsAborted(),
      planRetry: assign(({ context }) => ({
        retryDelayMs: backoffDelay(currentRun().agent.resolved.retry, context.attemptsOnModel, context.lastOutcome?.error ?? null),
      })),
      // The failed reply leaves nothing in history; the re-run gets one guidance message instead.
      countFailedReportTurn: () => {
        const run = currentRun();
        run.ledger.increment('turnsFailed');
        run.ledger.recordFailure('reportTurnWithoutWork');
      },
      discardFailedReportTurn: ({ context }) => {
        const run = currentRun();
        run.agent.history.length = Math.min(run.agent.history.length, run.turn.replyStart);
        const error = modelError('unknown', 'report mode: the turn ran no valid tool and sent no final report');
        run.emit({ type: 'retry', turnIndex: run.turn.turnIndex, attempt: context.failedTurnRetries + 1, delayMs: 0, error });
      },
      queueReportGuidance: assign(({ context }) => ({ pending: [...context.pending, { role: 'user' as const, content: REPORT_GUIDANCE }] })),
    },
  });
}

function wasExecuted(run: RunSession, toolCallId: string): boolean {
  return run.executedCalls.has(toolCallId);
}
