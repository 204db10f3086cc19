/**
 * checkInvariants: the checker every scenario test runs on an event log.
 *
 * Input: the events in emission order, optionally the committed history (`messages`). A log may
 * hold several runs of one agent one after another; events are grouped by runId and each run is
 * checked on its own (runs must not interleave). Every violation is one string that starts with
 * its invariant and names the seq (or log index) and ids involved:
 *
 * - `schema:`  an event or message does not match the domain schema.
 * - `seq:`     per run, seq strictly increases; every event has a runId; while a turn is open every
 *              event (retry, modelFallback, … included) carries that turn's turnIndex; turnStart
 *              indices strictly increase within a run.
 * - `pairing:` agentStart first and once; agentEnd exactly once and last; turnStart/turnEnd
 *              alternate; turn-scoped events (beforeModelCall, message*, tool*) only inside a turn;
 *              messageStart/messageEnd pair without nesting, messageUpdate only inside them, at most
 *              one messageStart per turn and only after a beforeModelCall of that turn; tool events
 *              only after the turn's messageEnd; approvals resolve once per request, before any
 *              start of that call and never followed by a start when denied; toolExecutionStart at
 *              most once per call, toolExecutionEnd at most once and after the start; every start
 *              has an end before turnEnd. Tool call ids are scoped to their turn. toolsChanged
 *              only between turns.
 * - `attribution:` every toolExecutionUpdate names a call started in its turn, with the start's
 *              tool name, after that start and before that call's end; so does every
 *              elicitationRequested/elicitationResolved, which pair one at a time per call, the
 *              request resolved before the call's end.
 * - `parity:`  history: each assistant's tool calls are answered by exactly one toolResult each,
 *              in call order, before the next assistant message (or the end); no orphan or
 *              duplicate results; result toolName = call name. Checked on `messages` when given,
 *              else on every agentEnd.messages. Event log: each turnEnd's toolResults answer its
 *              assistant's tool calls the same way (a turnEnd without assistant has no results);
 *              turnEnd.assistant keeps the tool calls (ids and names) its messageEnd streamed;
 *              tool events name tool calls of the streamed assistant; every committed tool call
 *              has a toolExecutionEnd (also calls that never started).
 * - `endReason:` a turnEnd 'complete' has an assistant without tool calls; a run ending
 *              'naturalEnd' has a last turnEnd 'complete' and a last history assistant without tool
 *              calls; status 'aborted' ⇔ endReason 'aborted'; naturalEnd/finalReport ⇒ 'completed'.
 *              A last turn ending 'toolsExecuted' therefore only fits maxTurns, aborted, policyStop,
 *              retryExhausted, fatalError or finalReport.
 * - `counters:` see below.
 *
 * Counters (src/domain/counters.ts) are cumulative per agent, so each agentEnd.counters minus the
 * previous agentEnd's counters (zero for the log's first agentEnd) — "this run's counters" below — is
 * compared with the events of the runs since that previous agentEnd. A log that starts with a
 * later run of an agent (or a resumed session) is therefore not checkable for counters. Checked:
 * - turns              = number of turnEnd events (every turnEnd counts, whatever its reason)
 * - modelCalls         = number of beforeModelCall events (one per model request, retries and
 *                        fallbacks included), and ≥ number of messageStart events
 * - retries            = number of retry events
 * - backoffMs          = sum of retry.delayMs (the announced delay, even when an abort cut it short)
 * - modelFallbacks     = number of modelFallback events
 * - overflowRecoveries = number of contextCompacted events (emit contextCompacted only for an
 *                        overflow recovery, never for a proactive transform)
 * - toolCallsRequested = number of toolCall blocks in the assistants of turnEnd events
 * - toolCallsExecuted  = number of toolExecutionStart events
 * - toolCallsFailed    = number of toolExecutionEnd events with isError whose call started
 *                        (cancelled and aborted running calls included)
 * - toolCallsInvalid + toolCallsRejected ≤ number of toolExecutionEnd events whose call never
 *                        started (those also cover skipped, stopped, unstarted-aborted calls)
 * - approvalsRequested = number of toolApprovalRequested events
 * - approvalsDenied    = number of toolApprovalResolved events with approved false
 * - tokensIn/tokensOut/tokensCacheRead/tokensCacheWrite ≥ the sum of usage input/output/cacheRead/
 *                        cacheWrite of messageEnd messages (failed attempts were paid for too)
 * - from the second agentEnd on, no numeric counter goes down.
 * Not checked (the log has no event for them): turnsFailed, steeringDelivered, followUpsDelivered,
 * costUsd, failureCodes.
 */
import type { AgentEvent, AgentEventType, Message } from '../domain/index.js';
import { findAgentEnd, type LoggedEvent, locate, type RunLog } from './invariants/common.js';
import { checkCounters } from './invariants/counters.js';
import { checkEndReason } from './invariants/end-reason.js';
import { checkHistoryParity } from './invariants/parity.js';
import { walkRun } from './invariants/run-walk.js';
import { checkEventShape, checkMessagesShape, seenMessages } from './invariants/schema.js';

export interface InvariantReport {
  readonly ok: boolean;
  readonly violations: string[];
}

/** Thrown by assertInvariants; `violations` holds the same strings checkInvariants returns. */
export class InvariantViolationError extends Error {
  override readonly name = 'InvariantViolationError';
  constructor(readonly violations: readonly string[]) {
    super(`${violations.length} invariant violation(s):\n${violations.map((v) => `  - ${v}`).join('\n')}`);
  }
}

function groupRuns(events: readonly AgentEvent[], out: string[]): RunLog[] {
  const runs = new Map<string, LoggedEvent[]>();
  const seen = seenMessages();
  let current: string | null = null;
  events.forEach((event, index) => {
    if (typeof event !== 'object' || event === null) {
      out.push(`schema: entry at index ${index} is not an event object`);
      return;
    }
    const at = locate(event, index);
    checkEventShape(event, at, out, seen);
    const runId = typeof event.runId === 'string' && event.runId !== '' ? event.runId : '(none)';
    if (runId === '(none)') out.push(`seq: ${event.type} at index ${index} has no runId`);
    let run = runs.get(runId);
    if (!run) {
      run = [];
      runs.set(runId, run);
    } else if (current !== runId) {
      out.push(`pairing: run ${runId} resumes at ${at} after run ${current} began`);
    }
    current = runId;
    run.push({ event, index, at });
  });
  return [...runs].map(([runId, logged]) => ({ runId, events: logged }));
}

export function checkInvariants(events: readonly AgentEvent[], messages?: readonly Message[]): InvariantReport {
  const violations: string[] = [];
  if (!Array.isArray(events)) {
    return { ok: false, violations: ['schema: events is not an array'] };
  }
  const runs = groupRuns(events, violations);
  if (runs.length === 0) violations.push('pairing: the log is empty (no agentStart)');
  if (messages !== undefined) {
    if (Array.isArray(messages)) {
      checkMessagesShape(messages, 'history', violations);
      checkHistoryParity(messages, 'history', violations);
    } else {
      violations.push('schema: messages is not an array');
    }
  }
  runs.forEach((run, i) => {
    walkRun(run, violations);
    const agentEnd = findAgentEnd(run);
    const endMessages = agentEnd && Array.isArray(agentEnd.event.messages) ? agentEnd.event.messages : null;
    if (messages === undefined && agentEnd && endMessages) {
      checkHistoryParity(endMessages, `agentEnd.messages of run ${run.runId} (${agentEnd.at})`, violations);
    }
    // The caller's history is the one after the last run; earlier runs are judged by their own.
    const history = i === runs.length - 1 && Array.isArray(messages) ? messages : endMessages;
    checkEndReason(run, history, violations);
  });
  checkCounters(runs, violations);
  return { ok: violations.length === 0, violations };
}

/** Throws an InvariantViolationError listing every violation; returns quietly on a clean log. */
export function assertInvariants(events: readonly AgentEvent[], messages?: readonly Message[]): void {
  const { violations } = checkInvariants(events, messages);
  if (violations.length > 0) throw new InvariantViolationError(violations);
}

/** The event types in order, for sequence assertions. */
export function eventTypes(events: readonly AgentEvent[]): AgentEventType[] {
  return events.map((event) => event.type);
}
