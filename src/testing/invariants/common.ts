import type { AgentEvent, AgentEventOf, AgentEventType, AssistantMessage, Message } from '../../domain/index.js';

/** An event with its position in the log and a ready-made locator for violation strings. */
export interface LoggedEvent {
  readonly event: AgentEvent;
  readonly index: number;
  /** `seq 5`, or `index 5` when the event has no usable seq. */
  readonly at: string;
}

/** The events of one run (one runId), in log order. */
export interface RunLog {
  readonly runId: string;
  readonly events: readonly LoggedEvent[];
}

/** A tool call as the checkers see it: id and name only (arguments never matter for pairing). */
export interface CallRef {
  readonly id: string;
  readonly name: string;
}

export const TURN_SCOPED: ReadonlySet<AgentEventType> = new Set<AgentEventType>([
  'turnStart',
  'beforeModelCall',
  'messageStart',
  'messageUpdate',
  'messageEnd',
  'toolApprovalRequested',
  'toolApprovalResolved',
  'toolExecutionStart',
  'toolExecutionUpdate',
  'toolExecutionEnd',
  'elicitationRequested',
  'elicitationResolved',
  'turnEnd',
]);

export const TOOL_EVENTS: ReadonlySet<AgentEventType> = new Set<AgentEventType>([
  'toolApprovalRequested',
  'toolApprovalResolved',
  'toolExecutionStart',
  'toolExecutionUpdate',
  'toolExecutionEnd',
  'elicitationRequested',
  'elicitationResolved',
]);

export function hasValidSeq(event: AgentEvent): boolean {
  return typeof event.seq === 'number' && Number.isInteger(event.seq) && event.seq >= 0;
}

export function locate(event: AgentEvent, index: number): string {
  return hasValidSeq(event) ? `seq ${event.seq}` : `index ${index}`;
}

export function hasTurnIndex(event: AgentEvent): event is AgentEvent & { turnIndex: number } {
  return typeof event.turnIndex === 'number' && Number.isInteger(event.turnIndex);
}

/**
 * The tool-call blocks of an assistant message. Tolerates malformed input (the schema check reports
 * it) so a broken log yields violations, never a crash.
 */
export function callsOf(message: AssistantMessage | null | undefined): CallRef[] {
  if (!message || !Array.isArray(message.content)) return [];
  const calls: CallRef[] = [];
  for (const block of message.content) {
    if (block && typeof block === 'object' && block.type === 'toolCall') {
      calls.push({ id: String(block.id), name: String(block.name) });
    }
  }
  return calls;
}

export function isMessageObject(value: unknown): value is Message {
  return typeof value === 'object' && value !== null && 'role' in value;
}

export function describeCalls(calls: readonly CallRef[]): string {
  return `[${calls.map((c) => `${c.id} (${c.name})`).join(', ')}]`;
}

/** The run's first agentEnd (a second one is a pairing violation reported elsewhere). */
export function findAgentEnd(run: RunLog): (LoggedEvent & { event: AgentEventOf<'agentEnd'> }) | null {
  for (const logged of run.events) {
    if (logged.event.type === 'agentEnd') return logged as LoggedEvent & { event: AgentEventOf<'agentEnd'> };
  }
  return null;
}
