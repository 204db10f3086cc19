import type { WireEvent } from '../protocol.js';
import { clockTime, h } from './dom.js';

/**
 * The event log with filters: by kind (lifecycle, model, tools, approvals, problems) and by text.
 * The last rows up to the cursor are drawn (a long session's log is read through the filters).
 */

const SHOWN_ROWS = 250;

export const EVENT_KINDS: Record<string, string> = {
  lifecycle: 'agentStart agentEnd turnStart turnEnd toolsChanged',
  model: 'beforeModelCall messageStart messageUpdate messageEnd retry modelFallback contextCompacted',
  tools: 'toolExecutionStart toolExecutionUpdate toolExecutionEnd',
  approvals: 'toolApprovalRequested toolApprovalResolved elicitationRequested elicitationResolved',
  problems: 'policyError retry modelFallback',
};

export interface EventLogFilter {
  kinds: Set<string>;
  text: string;
}

export function eventSummary(event: WireEvent): string {
  switch (event.type) {
    case 'turnStart':
      return `turn ${event.turnIndex}${event.steeringDelivered ? ` (delivers ${event.steeringDelivered} steering)` : ''}`;
    case 'turnEnd':
      return `turn ${event.turnIndex} · ${event.reason}`;
    case 'beforeModelCall':
      return `${event.model} · ${messageCount(event.messages)} messages`;
    case 'messageUpdate': {
      const deltas = event.coalesced ? ` (${event.coalesced} deltas)` : '';
      return event.delta.type === 'toolCall'
        ? `${event.delta.name}${deltas} ${event.delta.argumentsDelta}`
        : `${event.delta.type}${deltas}: ${event.delta.text}`;
    }
    case 'messageEnd':
      return `${event.message.stopReason}${event.error ? ` · ${event.error.kind}` : ''}`;
    case 'toolApprovalRequested':
    case 'toolExecutionStart':
      return `${event.toolName} ${event.toolCallId} ${JSON.stringify(event.arguments)}`;
    case 'toolApprovalResolved':
      return `${event.toolName} ${event.toolCallId} ${event.approved ? 'approved' : 'denied'}`;
    case 'toolExecutionUpdate':
      return `${event.toolName} ${event.toolCallId} ${JSON.stringify(event.partial)}`;
    case 'toolExecutionEnd':
      return `${event.toolName} ${event.toolCallId}${event.isError ? ' (error)' : ''}: ${event.result}`;
    case 'retry':
      return `attempt ${event.attempt} in ${event.delayMs} ms · ${event.error.kind}`;
    case 'modelFallback':
      return `${event.from} → ${event.to}`;
    case 'agentEnd':
      return `${event.status} · ${event.endReason}${event.error ? ` · ${event.error.message}` : ''}`;
    case 'policyError':
      return `${event.slot}: ${event.message}`;
    case 'elicitationRequested':
      return `${event.toolName} ${event.toolCallId}: ${event.message}`;
    case 'elicitationResolved':
      return `${event.toolName} ${event.toolCallId}: ${event.action}`;
    default:
      return '';
  }
}

/** How many messages a wire event's `messages` stands for. */
function messageCount(messages: { length: number } | { historyPrefix: number; tail: unknown[] }): number {
  return 'historyPrefix' in messages ? messages.historyPrefix + messages.tail.length : messages.length;
}

/** The kinds each event type belongs to. */
const KINDS_OF_TYPE = new Map<string, string[]>();
for (const [kind, types] of Object.entries(EVENT_KINDS))
  for (const type of types.split(' ')) KINDS_OF_TYPE.set(type, [...(KINDS_OF_TYPE.get(type) ?? []), kind]);

export function matchesFilter(event: WireEvent, filter: EventLogFilter): boolean {
  if (!(KINDS_OF_TYPE.get(event.type) ?? []).some((kind) => filter.kinds.has(kind))) return false;
  if (filter.text === '') return true;
  const needle = filter.text.toLowerCase();
  return `${event.type} ${eventSummary(event)}`.toLowerCase().includes(needle);
}

/** Draws the rows; `cursor` is the index of the last event shown as happened (later ones are faded). */
export function renderEventLog(
  list: HTMLElement,
  status: HTMLElement,
  events: readonly WireEvent[],
  filter: EventLogFilter,
  cursor: number,
  onPick: (index: number) => void,
): void {
  const matching: number[] = [];
  events.forEach((event, index) => {
    if (matchesFilter(event, filter)) matching.push(index);
  });
  // The rows around the cursor: those up to it, and a few after it (faded) in time travel.
  const upTo = matching.filter((index) => index <= cursor);
  const after = matching.filter((index) => index > cursor).slice(0, 20);
  const shown = [...upTo.slice(-SHOWN_ROWS), ...after];
  const rows = shown.map((index) => {
    const event = events[index] as WireEvent;
    const row = h(
      'tr',
      {
        class: `event${index > cursor ? ' future' : ''}${index === cursor ? ' at-cursor' : ''}`,
        'data-index': index,
        'data-type': event.type,
        title: 'Travel to this event',
      },
      h('td', { class: 'index' }, String(index)),
      h('td', { class: 'time' }, clockTime(event.t)),
      h('td', { class: 'seq' }, `${event.runId.slice(-6)}#${event.seq}`),
      h('td', { class: 'type' }, event.type),
      h('td', { class: 'summary' }, eventSummary(event).slice(0, 300)),
    );
    row.addEventListener('click', () => onPick(index));
    return row;
  });
  list.replaceChildren(...rows);
  const hidden = upTo.length - Math.min(upTo.length, SHOWN_ROWS);
  status.textContent = `${matching.length} of ${events.length} events match${hidden > 0 ? ` · ${hidden} earlier not drawn (narrow the filter)` : ''}`;
}
