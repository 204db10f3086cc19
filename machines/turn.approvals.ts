import { errorResult, rejectedText, settle } from './tool-results.js';
import type { TurnContext } from './turn.context.js';
import type { ApprovalVerdict, PreparedCall } from './turn.types.js';

/**
 * The approvals of a batch, pure: every prepared call not approved yet waits, all of them at once; each
 * is decided on its own (a handler's verdict, or a kept `resolveApproval` answer), in any order. The
 * turn's chart decides when; these functions only read and update the calls.
 */

/** A `resolveApproval` answer the turn holds until it decides that call. */
export interface KeptDecision {
  toolCallId: string;
  verdict: ApprovalVerdict;
}

/**
 * The calls of the batch that wait for approval, in call order: every prepared call not approved yet.
 * They are asked together and decided one by one, in any order.
 */
export function awaitingApproval(context: Pick<TurnContext, 'prepared'>): PreparedCall[] {
  return context.prepared.filter((entry) => !entry.approved);
}

/** The call awaiting approval with this id, if it still waits. */
export function awaitingCall(context: Pick<TurnContext, 'prepared'>, toolCallId: string): PreparedCall | null {
  return context.prepared.find((entry) => !entry.approved && entry.call.id === toolCallId) ?? null;
}

/** The kept `resolveApproval` answers whose calls still wait, in the order they came, each with its call. */
export function keptAnswers(
  context: Pick<TurnContext, 'prepared' | 'decisions'>,
): Array<{ asked: PreparedCall; verdict: ApprovalVerdict }> {
  return context.decisions.flatMap((decision) => {
    const asked = awaitingCall(context, decision.toolCallId);
    return asked ? [{ asked, verdict: decision.verdict }] : [];
  });
}

/**
 * The handler's verdict applied to the call it is about (the guard that let it in found that call waiting;
 * ids are unique among the prepared calls).
 */
export function verdictApplied(
  context: Pick<TurnContext, 'prepared' | 'settled'>,
  toolCallId: string,
  verdict: ApprovalVerdict,
): Partial<Pick<TurnContext, 'prepared' | 'settled'>> {
  for (const entry of context.prepared) if (entry.call.id === toolCallId) return callDecided(context, entry, verdict);
  return {};
}

/** The prepared calls and results after a verdict on `asked`. */
export function callDecided(
  context: Pick<TurnContext, 'prepared' | 'settled'>,
  asked: PreparedCall,
  verdict: ApprovalVerdict,
): Pick<TurnContext, 'prepared' | 'settled'> {
  const others = (replacement: PreparedCall | null) =>
    context.prepared.flatMap((entry) => (entry === asked ? (replacement ? [replacement] : []) : [entry]));
  switch (verdict.kind) {
    case 'approved':
      return { prepared: others({ ...asked, approved: true }), settled: context.settled };
    case 'approvedWith': {
      const call = { ...asked.call, arguments: verdict.arguments };
      const rewritten = { ...asked, call, approved: true, cleared: false, rewritten: true };
      return { prepared: others(rewritten), settled: context.settled };
    }
    case 'denied':
      return {
        prepared: others(null),
        settled: settle(context.settled, asked.position, errorResult(asked.call, rejectedText(verdict.reason))),
      };
    case 'failed':
      return {
        prepared: others(null),
        settled: settle(
          context.settled,
          asked.position,
          errorResult(asked.call, `approval failed: ${verdict.message}`),
        ),
      };
  }
}

/** Which call a toolApprovalResolved is about, and how it was decided. */
export interface ApprovalResolution {
  toolCallId: string;
  toolName: string;
  approved: boolean;
}

/** The calls whose request is published and not decided yet, in call order. */
export function requestsOut(context: Pick<TurnContext, 'prepared' | 'asked'>): PreparedCall[] {
  return awaitingApproval(context).filter(({ call }) => context.asked.includes(call.id));
}

export const approves = (verdict: ApprovalVerdict) => verdict.kind === 'approved' || verdict.kind === 'approvedWith';

/** How a call was decided, for its toolApprovalResolved. */
export function resolutionOf(call: { id: string; name: string }, approved: boolean): ApprovalResolution {
  return { toolCallId: call.id, toolName: call.name, approved };
}
