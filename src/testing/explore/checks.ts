import type { AgentEvent } from '../../domain/events.js';
import type { Message } from '../../domain/messages.js';
import { checkInvariants } from '../check-invariants.js';
import type { PathRecord, SentMessage } from './session.js';
import type { Spec } from './spec.js';

/**
 * What every explored path must satisfy: the invariants of DESIGN §4 on its log and history, and
 * what only the explorer can check because it knows what it did — the run ended (no hang), every
 * message it sent is delivered once or still queued, an abort sent while the run waited ends it
 * aborted and starts nothing new — then the user's property.
 */
export function pathProblems(spec: Spec, record: PathRecord): string[] {
  const problems = [...checkInvariants(record.log, record.messages).violations];
  if (record.stuck) problems.push(record.stuck);
  else if (!record.result) problems.push('hang: the run never ended');
  problems.push(...deliveryProblems(record.sent, record.messages, record.queued));
  problems.push(...abortProblems(record));
  if (spec.property) problems.push(...propertyProblems(spec, record));
  return problems;
}

/** Nothing lost (§4.4): each message sent is in the history exactly once, or still queued. */
export function deliveryProblems(sent: readonly SentMessage[], messages: readonly Message[], queued: PathRecord['queued']): string[] {
  const problems: string[] = [];
  const count = (list: readonly Message[], text: string) => list.filter((m) => m.role === 'user' && m.content === text).length;
  for (const message of sent) {
    const inHistory = count(messages, message.text);
    const own = message.kind === 'steer' ? queued.steering : queued.followUp;
    const times = inHistory + count(own, message.text);
    const where = `"${message.text}" (in history ${inHistory}×, queued ${times - inHistory}×)`;
    if (times === 0) problems.push(`nothing lost: ${where} was dropped`);
    if (times > 1) problems.push(`nothing lost: ${where} is there more than once`);
    if (message.receipt?.status === 'delivered' && inHistory !== 1) {
      problems.push(`receipt: ${where} is reported delivered but is not in the history once`);
    }
  }
  return problems;
}

/** Events that mean new work began: none may follow an abort the run was waiting when it got. */
const WORK_EVENTS = new Set<AgentEvent['type']>(['beforeModelCall', 'toolExecutionStart', 'toolApprovalRequested', 'retry', 'modelFallback']);

function abortProblems(record: PathRecord): string[] {
  const problems: string[] = [];
  for (const abort of record.aborts) {
    if (record.crashed) continue;
    const work = record.log.slice(abort.at).find((event) => WORK_EVENTS.has(event.type));
    if (work) problems.push(`abort: new work after agent.abort() (log #${abort.at}): ${work.type} at seq ${work.seq}`);
    for (const call of abort.lateCalls) problems.push(`abort: after agent.abort() the agent still called out (${call})`);
  }
  const first = record.aborts[0];
  if (first && record.result && record.result.status !== 'aborted' && !record.crashed) {
    // An abort while the run waited on the world, or one after which a turn starts, must win; one that
    // lands in the subscriber of the last turn's end may find the outcome decided.
    const turnAfter = record.log.slice(first.at).some((event) => event.type === 'turnStart');
    if (first.whileWaiting || turnAfter) problems.push(`abort: the run was aborted while running but ended ${record.result.status}/${record.result.endReason}`);
  }
  return problems;
}

function propertyProblems(spec: Spec, record: PathRecord): string[] {
  try {
    const verdict = spec.property!(record.log, record.messages, { steps: record.steps, result: record.result });
    if (verdict === false) return ['property: violated'];
    if (typeof verdict === 'string') return [`property: ${verdict}`];
    return [];
  } catch (error) {
    return [`property: ${error instanceof Error ? error.message : String(error)}`];
  }
}
