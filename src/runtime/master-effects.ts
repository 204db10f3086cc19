import { assign, fromPromise } from 'xstate';
import { describeError, masterMachine } from '../../machines/master.machine.js';
import { compactMessages } from '../context/compact.js';
import { COMPACTION_TARGET_RATIO } from '../context/guard.js';
import { modelError } from '../domain/errors.js';
import { createPostLoopRunner } from './policy-slots.js';
import { backoffDelay } from './retry.js';
import { runOf } from './run-registry.js';
import { ABORTED, raceAbort } from './timers.js';
import { provideTurnMachine } from './turn-effects.js';

export const REPORT_GUIDANCE =
  'You did not call any tool. Continue the task with the tools available, and call the final report tool when you are done.';

/** The master machine wired to the runtime; each effect finds its run through the actor system. */
export function provideMasterMachine() {
  return masterMachine.provide({
    actors: {
      turn: provideTurnMachine(),
      runPostLoopPolicies: createPostLoopRunner(),
      recoverFromOverflow: fromPromise<{ recovered: boolean }, { turnIndex: number }>(async ({ input, system }) => {
        const run = runOf(system);
        const { agent } = run;
        const before = agent.history.slice();
        const request = { systemPrompt: agent.options.systemPrompt, tools: agent.registry.specs() };
        // Raced with the run's signal: a transform that never settles cannot hold an aborted run.
        const prepared = await run.awaitUser(raceAbort(agent.guard.prepare(before, { overflow: true, ...request }), run.signal));
        if (prepared === ABORTED || run.ended || run.signal.aborted) return { recovered: false };
        // A throwing or refused transform is reported and the default compaction (pairs kept
        // together) recovers instead.
        if (!prepared.ok) run.reportPolicyError('contextTransform', new Error(prepared.error.message));
        else if (prepared.transformRejected) run.reportTransformRejection(prepared.transformRejected);
        const messages = prepared.ok ? prepared.messages : compactMessages(before, { maxTokens: defaultBudget(agent.guard.estimate(before, request.systemPrompt, request.tools)) });
        run.turn.overflowView = messages;
        const sizeOf = (messages: typeof before) => ({ messages: messages.length, tokens: agent.guard.estimate(messages, request.systemPrompt, request.tools) });
        const compacted = (prepared.ok ? prepared.compacted : null) ?? { before: sizeOf(before), after: sizeOf(messages) };
        run.ledger.increment('overflowRecoveries');
        run.emit({ type: 'contextCompacted', turnIndex: input.turnIndex, ...compacted });
        return { recovered: true };
      }),
    },
    actions: {
      announceAgentStart: ({ system }) => runOf(system).emit({ type: 'agentStart' }),
      acknowledgeQueued: ({ event, system }) => {
        if (event.type === 'STEER' || event.type === 'FOLLOW_UP') runOf(system).agent.unacknowledged.delete(event.message);
      },
      announceAgentEnd: ({ context, system }) => runOf(system).finish(context),
      announceRetry: ({ context, system }) => {
        const error = context.lastOutcome?.error;
        if (error) runOf(system).emit({ type: 'retry', turnIndex: context.turnIndex, attempt: context.attemptsOnModel, delayMs: context.retryDelayMs, error });
      },
      announceModelFallback: ({ context, system }) => {
        const run = runOf(system);
        const from = run.model.name;
        run.modelIndex = context.modelIndex;
        // The failure that made the run leave `from` (an observer's span of that attempt records it).
        const error = context.lastOutcome?.error;
        const cause = error ? { error } : {};
        run.emit({ type: 'modelFallback', turnIndex: context.turnIndex, from, to: run.model.name, ...cause });
      },
      closeOpenTurnAsAborted: ({ system }) => runOf(system).closeTurnAsAborted(),
      closeTurnAfterInternalError: ({ context, event, system }) =>
        runOf(system).closeAfterInternalError(
          [...context.turnInput, ...context.pending],
          describeError('error' in event ? event.error : event),
        ),
      planRetry: assign(({ context, system }) => {
        const { agent } = runOf(system);
        // A durable host draws the jitter so that a replay waits as long as the original did.
        const random = agent.host ? () => agent.host!.random() : undefined;
        const error = context.lastOutcome?.error ?? null;
        return { retryDelayMs: backoffDelay(agent.resolved.retry, context.attemptsOnModel, error, random) };
      }),
      countFailedReportTurn: ({ system }) => {
        const run = runOf(system);
        run.ledger.increment('turnsFailed');
        run.ledger.recordFailure('reportTurnWithoutWork');
      },
      // The failed reply leaves nothing in history; the re-run gets one guidance message instead.
      discardFailedReportTurn: ({ context, system }) => {
        const run = runOf(system);
        run.agent.log.truncate(run.turn.replyStart);
        const error = modelError('unknown', 'report mode: the turn ran no valid tool and sent no final report');
        run.emit({ type: 'retry', turnIndex: run.turn.turnIndex, attempt: context.failedTurnRetries + 1, delayMs: 0, error });
      },
      queueReportGuidance: assign(({ context }) => ({ pending: [...context.pending, { role: 'user' as const, content: REPORT_GUIDANCE }] })),
    },
  });
}

/** The default compaction target after an overflow: 70% of what the provider just refused. */
function defaultBudget(estimate: number): number {
  return Math.max(1, Math.floor(estimate * COMPACTION_TARGET_RATIO));
}

let provided: ReturnType<typeof provideMasterMachine> | null = null;

/** The provided master machine, built once per process. */
export function masterLogic(): ReturnType<typeof provideMasterMachine> {
  provided ??= provideMasterMachine();
  return provided;
}
