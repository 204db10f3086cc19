import type { AgentEvent } from '../../domain/events.js';
import type { Message } from '../../domain/messages.js';
import { checkToolParity } from '../../context/parity.js';
import { checkInvariants } from '../check-invariants.js';
import { checkCounters } from './counters.js';
import { checkQueues } from './queues.js';
import { checkRuns } from './runs.js';
import type { Observed } from './types.js';

/**
 * What must hold whatever a driver did to the agent and in whatever order: the invariants of
 * checkInvariants on the whole log, every run resolved, an abort while running ends that run as
 * aborted and starts nothing new, every steering / follow-up message delivered exactly once or
 * still queued, parity of the history and of every model request, what was published is what was
 * committed, steering interrupts the turn it lands in, and counters that agree with what the world
 * saw. One checker for the explorer, raceAgent and the project's own interleavings.
 */
export function checkObserved(observed: Observed): string[] {
  const violations: string[] = [];
  const history = observed.agent.messages;
  for (const violation of checkInvariants(observed.events, history).violations)
    violations.push(`invariant: ${violation}`);
  checkRuns(observed, violations);
  checkQueues(observed, violations);
  const parity = checkToolParity(history);
  if (!parity.ok) violations.push(...parity.violations.map((v) => `parity: final history: ${v}`));
  observed.world?.requests.forEach((request, index) => {
    const check = checkToolParity(request.messages as Message[]);
    if (!check.ok)
      violations.push(...check.violations.map((v) => `parity: model request ${index} (${request.model}): ${v}`));
  });
  checkCommittedResults(observed.events, violations);
  checkSteeringInterrupts(observed, violations);
  checkCounters(observed, violations);
  return violations;
}

/**
 * Steering interrupts whatever part of a turn it lands in: once a steering message was
 * accepted while a turn was open, no tool call of that turn starts and no approval is requested.
 */
function checkSteeringInterrupts({ steeringInterrupts, events, momentOf, sent }: Observed, out: string[]): void {
  if (!steeringInterrupts || !momentOf) return;
  for (const message of sent) {
    if (message.source !== 'steering' || !message.duringRun) continue;
    const before = events.filter((_, index) => momentOf[index]! < message.moment);
    const last = before.at(-1);
    if (!last) continue;
    const runId = last.runId;
    const started = before.filter((e) => e.runId === runId && e.type === 'turnStart').at(-1);
    if (!started || started.turnIndex === undefined) continue;
    const turn = started.turnIndex;
    if (before.some((e) => e.runId === runId && e.type === 'turnEnd' && e.turnIndex === turn)) continue;
    const startsWork = (e: AgentEvent) => e.type === 'toolExecutionStart' || e.type === 'toolApprovalRequested';
    const late = events.find(
      (e, index) => momentOf[index]! > message.moment && e.runId === runId && e.turnIndex === turn && startsWork(e),
    );
    if (late) {
      out.push(
        `steering: "${message.text}" was accepted during turn ${turn}, yet ${late.type} followed at seq ${late.seq}`,
      );
    }
  }
}

const CANCELLED_BY_STEERING = 'cancelled: steering';
const SKIPPED_BY_STEERING = 'skipped: steering';
const ABORTED_RESULT = 'aborted: the run was cancelled';

/**
 * What was published is what is committed: each turnEnd result matches its call's
 * toolExecutionEnd; steering-cancelled results only end steering-interrupted turns (or turns an
 * abort ended right after the cancellation), aborted results only aborted turns.
 */
function checkCommittedResults(events: readonly AgentEvent[], out: string[]): void {
  let ends = new Map<string, { result: string; isError: boolean }>();
  for (const event of events) {
    if (event.type === 'turnStart') ends = new Map();
    if (event.type === 'toolExecutionEnd')
      ends.set(`${event.runId}:${event.toolCallId}`, { result: event.result, isError: event.isError });
    if (event.type !== 'turnEnd') continue;
    for (const result of event.toolResults) {
      const published = ends.get(`${event.runId}:${result.toolCallId}`);
      if (published && (published.result !== result.content || published.isError !== result.isError)) {
        out.push(
          `results: ${result.toolCallId} was published as ${JSON.stringify(published.result)} but committed as ${JSON.stringify(result.content)} (turnEnd seq ${event.seq})`,
        );
      }
      const bySteering =
        result.content.startsWith(CANCELLED_BY_STEERING) || result.content.startsWith(SKIPPED_BY_STEERING);
      if (bySteering && event.reason !== 'steeringInterrupt' && event.reason !== 'aborted') {
        out.push(
          `results: ${result.toolCallId} was cancelled by steering in a turn that ended ${event.reason} (seq ${event.seq})`,
        );
      }
      if (result.content.startsWith(ABORTED_RESULT) && event.reason !== 'aborted') {
        out.push(
          `results: ${result.toolCallId} got the aborted result in a turn that ended ${event.reason} (seq ${event.seq})`,
        );
      }
    }
  }
}
