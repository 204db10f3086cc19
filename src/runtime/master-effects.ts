import { assign, fromPromise } from 'xstate';
import { masterMachine } from '../../machines/master.machine.js';
import type { MasterContext, MasterOutput } from '../../machines/master.types.js';
import { compactMessages } from '../context/compact.js';
import { COMPACTION_TARGET_RATIO } from '../context/guard.js';
import { modelError } from '../domain/errors.js';
import type { Message } from '../domain/messages.js';
import { closeAfterInternalError } from './internal-error.js';
import { reportGuidance } from './report.js';
import { createPostLoopRunner } from './policy-slots.js';
import { backoffDelay } from './retry.js';
import { runAction, runDeps, type RunDeps } from './run-registry.js';
import { ABORTED, raceAbort } from './timers.js';
import { provideTurnMachine } from './turn-effects.js';
import type { RuntimeImplementations } from './machine-names.js';

/** The master machine's actions that are its own (context updates, forwarding to the turn): the runtime provides the rest. */
export type MasterOwnActions =
  | 'recordInternalError'
  | 'forwardAbortToTurn'
  | 'forwardSteeringToTurn'
  | 'forwardDecisionToTurn'
  | 'recordAbortRequest'
  | 'queueSteering'
  | 'queueFollowUp'
  | 'startFreshTurn'
  | 'startNextTurn'
  | 'takeFollowUps'
  | 'resumeTurn'
  | 'recordOutcome'
  | 'countModelCall'
  | 'useOverflowAllowance'
  | 'recordOverflowView'
  | 'switchToFallbackModel'
  | 'retrySameTurn'
  | 'retryFailedTurn'
  | 'injectPostLoopMessages'
  | 'endAs'
  | 'endWithTurnError'
  | 'recordStop';

type Master = typeof masterMachine;

/** The master machine wired to the runtime; each effect finds its run through the actor system. */
export function provideMasterMachine() {
  return masterMachine.provide({ actors: masterActors(), actions: masterActions() });
}

function masterActors() {
  return {
    turn: provideTurnMachine(),
    runPostLoopPolicies: createPostLoopRunner(),
    recoverFromOverflow: fromPromise<{ view: Message[] | null }, { turnIndex: number }>(({ input, system }) =>
      recoverFromOverflow(runDeps(system), input.turnIndex),
    ),
  } satisfies RuntimeImplementations<Master, 'actors'>;
}

function masterActions() {
  return {
    announceAgentStart: runAction((run) => run.emit({ type: 'agentStart' })),
    acknowledgeQueued: runAction((run, { event }) => {
      if (event.type !== 'STEER' && event.type !== 'FOLLOW_UP') return;
      // Accepted means persisted: the queue is in the step taken after this one.
      run.agent.persister?.markDirty();
    }),
    announceAgentEnd: runAction((run, { context }) => run.finish(endOf(context))),
    announceRetry: runAction((run, { context }) => {
      const error = context.lastOutcome?.error;
      if (!error) return;
      const { turnIndex, retryDelayMs: delayMs } = context;
      run.emit({ type: 'retry', turnIndex, attempt: context.counts.attemptsOnModel, delayMs, error });
    }),
    announceModelFallback: runAction((run, { context }) => {
      const from = run.modelAt(context.modelIndex - 1).name;
      const to = run.modelAt(context.modelIndex).name;
      // The failure that made the run leave `from` (an observer's span of that attempt records it).
      const error = context.lastOutcome?.error;
      run.emit({ type: 'modelFallback', turnIndex: context.turnIndex, from, to, ...(error ? { error } : {}) });
    }),
    closeTurnAfterInternalError: runAction((run, { event, self }) => {
      // This step ends the run: a steer from a subscriber of the closing events would reach a
      // master that takes nothing more, so from here it queues between runs.
      run.closing = true;
      const error = 'error' in event ? event.error : event;
      closeAfterInternalError(run, self.getSnapshot(), error);
    }),
    planRetry: assign(({ context, system }) => {
      const { agent } = runDeps(system);
      // A durable host draws the jitter so that a replay waits as long as the original did.
      const random = agent.host ? () => agent.host!.random() : undefined;
      const error = context.lastOutcome?.error ?? null;
      return { retryDelayMs: backoffDelay(agent.resolved.retry, context.counts.attemptsOnModel, error, random) };
    }),
    countFailedReportTurn: runAction((run) => {
      run.ledger.increment('turnsFailed');
      run.ledger.recordFailure('reportTurnWithoutWork');
    }),
    // The failed reply leaves nothing in history; the re-run gets one guidance message instead.
    discardFailedReportTurn: runAction((run, { context }) => {
      const assistant = context.lastOutcome?.assistant;
      const at = assistant ? run.agent.history.lastIndexOf(assistant) : -1;
      if (at >= 0) run.agent.log.truncate(at);
      run.agent.persister?.markDirty();
      const error = modelError('unknown', 'report mode: the turn ran no valid tool and sent no final report');
      // The failed turn is the one just closed (the turn index has moved past it).
      const attempt = context.counts.failedTurnRetries + 1;
      run.emit({ type: 'retry', turnIndex: context.turnIndex - 1, attempt, delayMs: 0, error });
    }),
    queueReportGuidance: assign(({ context, system }) => {
      const { agent } = runDeps(system);
      const toolName = agent.options.finalReport?.toolName ?? '';
      const content = reportGuidance(toolName, context.lastOutcome ?? null, agent.registry);
      return { pending: [...context.pending, { role: 'user' as const, content }] };
    }),
  } satisfies RuntimeImplementations<Master, 'actions', MasterOwnActions>;
}

/** How the run ended, as the chart decided it, and what it leaves for the next run (the launcher finishes with it). */
export function endOf(context: MasterContext): MasterOutput {
  const { end, steeringQueue, followUpQueue, turnIndex, modelIndex } = context;
  return { ...end, steeringQueue, followUpQueue, turnIndex, modelIndex };
}

/**
 * Transforms the context with `overflow: true` (a throwing or refused transform is reported and
 * the default compaction, which keeps tool pairs together, recovers instead) and announces
 * `contextCompacted`. The compacted view is the output: the master gives it to every later attempt.
 */
async function recoverFromOverflow(run: RunDeps, turnIndex: number): Promise<{ view: Message[] | null }> {
  const { agent } = run;
  const before = agent.history.slice();
  const request = { systemPrompt: agent.options.systemPrompt, tools: agent.registry.specs() };
  // Raced with the run's signal: a transform that never settles cannot hold an aborted run.
  const prepared = await run.awaitUser(
    raceAbort(agent.guard.prepare(before, { overflow: true, ...request }), run.signal),
  );
  if (prepared === ABORTED || run.ended || run.signal.aborted) return { view: null };
  if (!prepared.ok) run.reportPolicyError('contextTransform', new Error(prepared.error.message), turnIndex);
  else if (prepared.transformRejected) run.reportTransformRejection(prepared.transformRejected, turnIndex);
  const estimate = (messages: Message[]) => agent.guard.estimate(messages, request.systemPrompt, request.tools);
  const messages = prepared.ok
    ? prepared.messages
    : compactMessages(before, { maxTokens: defaultBudget(estimate(before)) });
  const sizeOf = (list: Message[]) => ({ messages: list.length, tokens: estimate(list) });
  const compacted = (prepared.ok ? prepared.compacted : null) ?? { before: sizeOf(before), after: sizeOf(messages) };
  run.ledger.increment('overflowRecoveries');
  run.emit({ type: 'contextCompacted', turnIndex, ...compacted });
  return { view: messages };
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
