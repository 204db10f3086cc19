import { AgentError } from '../domain/errors.js';
import type { ApprovalDecision } from '../policies/types.js';
import { checkApprovalDecision } from '../policies/verdicts.js';
import type { PendingApproval } from '../store/types.js';
import { verdictOf } from './approvals.js';
import { sessionView } from './checkpoint.js';
import { parkIfWaiting, unpark, unparkSync } from './parking.js';
import { planResume } from './resume.js';
import type { AgentState, RunSession } from './run-session.js';
import { beginRun } from './run-start.js';

/**
 * Durable approvals (every call of the batch that waits, in call order) and running calls' questions
 * waiting for `resolveApproval`, each with the version to quote.
 */
export function pendingApprovalsOf(state: AgentState): PendingApproval[] {
  const approvals = sessionView(state).pendingApprovals.map(({ toolCallId, toolName, arguments: args, version }) => ({
    toolCallId,
    toolName,
    arguments: args,
    version,
  }));
  const questions = [...(state.run?.elicitations.values() ?? [])].map((question) => question.pending);
  return [...approvals, ...questions];
}

/** Parked runs of this process taking their lease back (a server store answers asynchronously). */
const unparking = new WeakMap<RunSession, Promise<boolean>>();
/** The calls answered meanwhile: a second answer to one is refused, as it is once the first is decided. */
const answeredWhileUnparking = new WeakMap<RunSession, Set<string>>();

/**
 * `resolveApproval`: checked at once (an invalid answer leaves the approval pending, untouched),
 * then given to the run that waits: this agent's, or the run the stored session holds parked, which
 * this agent then continues under the session's lease (checked again on the session as reloaded).
 */
export function answerApproval(
  state: AgentState,
  onSubscriberError: (error: unknown) => void,
  toolCallId: unknown,
  decision: ApprovalDecision,
  options: { version: number } | undefined,
): RunSession {
  if (typeof toolCallId !== 'string' || toolCallId === '') {
    throw new AgentError('InvalidInput', 'resolveApproval: the tool call id must be a non-empty string.');
  }
  const version: unknown = (options as { version?: unknown } | undefined)?.version;
  if (typeof version !== 'number' || !Number.isInteger(version)) {
    const hint = 'pass { version } (an integer, from pendingApprovals()) as the third argument';
    throw new AgentError('InvalidInput', `resolveApproval: ${hint}.`);
  }
  const checked = checkApprovalDecision(decision);
  if (!checked.ok) {
    const shapes = '{ approved: true }, { approved: true, arguments } or { approved: false, reason? }';
    throw new AgentError('InvalidInput', `resolveApproval: ${checked.problem}; expected ${shapes}.`);
  }
  const question = state.run?.elicitations.get(toolCallId);
  if (question) {
    checkPending([question.pending], toolCallId, version);
    question.answer(checked.value);
    return state.run as RunSession;
  }
  const pending = checkPending(sessionView(state).pendingApprovals, toolCallId, version);
  const call = { id: pending.toolCallId, name: pending.toolName, arguments: pending.arguments };
  const verdict = verdictOf(state.registry, call, checked.value);
  const run = state.run;
  const decided = (to: RunSession) => {
    to.master?.send({ type: 'APPROVAL_DECIDED', toolCallId, verdict });
    // Other calls of the batch may still wait: the run parks again once this decision is stored.
    queueMicrotask(() => parkIfWaiting(to));
  };
  const taking = run ? unparking.get(run) : undefined;
  if (run && (run.parked || taking)) {
    // This agent's own parked run: it takes its lease back and goes on, unless another agent moved it on.
    if (!state.access?.sync) {
      const answered = answeredWhileUnparking.get(run) ?? new Set<string>();
      if (answered.has(toolCallId)) {
        throw new AgentError('UnknownToolCall', `resolveApproval: tool call "${toolCallId}" was already answered.`);
      }
      answered.add(toolCallId);
      answeredWhileUnparking.set(run, answered);
      // Answers given while the lease is on its way (a batch answered in one go) wait for the same unpark.
      const goesOn =
        taking ??
        unpark(run).finally(() => {
          unparking.delete(run);
          answeredWhileUnparking.delete(run);
        });
      unparking.set(run, goesOn);
      void goesOn.then(
        (on) => on && decided(run),
        (error: unknown) => state.persister?.fail(error),
      );
      return run;
    }
    if (!unparkSync(run)) return answerApproval(state, onSubscriberError, toolCallId, decision, options);
  }
  if (run?.master) {
    decided(run);
    return run;
  }
  const stored = state.between?.run;
  return beginRun(state, onSubscriberError, {
    plan: () => {
      // Reloaded under the lease: the approval must still wait, at the version quoted.
      const current = state.between?.run;
      checkPending(sessionView(state).pendingApprovals, toolCallId, version);
      return planResume(state, current as NonNullable<typeof current>);
    },
    ...(stored ? { runId: stored.runId } : {}),
    continuesStoredRun: true,
    afterStart: decided,
  });
}

/** The approval of this call among those waiting, at the version quoted; else a typed refusal. */
function checkPending(waiting: readonly PendingApproval[], toolCallId: string, version: number): PendingApproval {
  const pending = waiting.find((candidate) => candidate.toolCallId === toolCallId);
  if (!pending) {
    const which = waiting.map((candidate) => `"${candidate.toolCallId}"`).join(', ');
    throw new AgentError(
      'UnknownToolCall',
      `resolveApproval: no approval is pending for tool call "${toolCallId}"${which ? ` (pending: ${which})` : ''}.`,
    );
  }
  if (version !== pending.version) {
    throw new AgentError(
      'StaleVersion',
      `resolveApproval: version ${version} is stale; the approval for "${toolCallId}" was requested at version ${pending.version}.`,
    );
  }
  return pending;
}
