import { AgentError } from '../domain/errors.js';
import type { ApprovalDecision } from '../policies/types.js';
import { checkApprovalDecision } from '../policies/verdicts.js';
import type { PendingApproval } from '../store/types.js';
import { verdictOf } from './approvals.js';
import { sessionView } from './checkpoint.js';
import { unpark, unparkSync } from './parking.js';
import { planResume } from './resume.js';
import type { AgentState, RunSession } from './run-session.js';
import { beginRun } from './run-start.js';

/** Durable approvals (and running calls' questions) waiting for `resolveApproval`, with the version to quote. */
export function pendingApprovalsOf(state: AgentState): PendingApproval[] {
  const pending = sessionView(state).pendingApproval;
  const questions = [...(state.run?.elicitations.values() ?? [])].map((question) => question.pending);
  const approval = pending
    ? [
        {
          toolCallId: pending.toolCallId,
          toolName: pending.toolName,
          arguments: pending.arguments,
          version: pending.version,
        },
      ]
    : [];
  return [...approval, ...questions];
}

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
    checkPending(question.pending, toolCallId, version);
    question.answer(checked.value);
    return state.run as RunSession;
  }
  const pending = checkPending(sessionView(state).pendingApproval, toolCallId, version);
  const call = { id: pending.toolCallId, name: pending.toolName, arguments: pending.arguments };
  const verdict = verdictOf(state.registry, call, checked.value);
  const run = state.run;
  const decided = (to: RunSession) => to.master?.send({ type: 'APPROVAL_DECIDED', toolCallId, verdict });
  if (run?.parked) {
    // This agent's own parked run: it takes its lease back and goes on, unless another agent moved it on.
    if (!state.access?.sync) {
      void unpark(run).then(
        (goesOn) => goesOn && decided(run),
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
      checkPending(sessionView(state).pendingApproval, toolCallId, version);
      return planResume(state, current as NonNullable<typeof current>);
    },
    ...(stored ? { runId: stored.runId } : {}),
    continuesStoredRun: true,
    afterStart: decided,
  });
}

function checkPending(pending: PendingApproval | null, toolCallId: string, version: number): PendingApproval {
  if (!pending || pending.toolCallId !== toolCallId) {
    const which = pending ? ` (pending: "${pending.toolCallId}")` : '';
    throw new AgentError(
      'UnknownToolCall',
      `resolveApproval: no approval is pending for tool call "${toolCallId}"${which}.`,
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
