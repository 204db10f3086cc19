import type { AgentEvent } from '../domain/events.js';
import { contextViewOf } from '../domain/history-view.js';
import type { Message } from '../domain/messages.js';
import type { WireEvent } from './protocol.js';

/** Strings longer than this are cut on their way to the page (a tool result of megabytes stays in the store). */
export const MAX_WIRE_STRING = 20_000;

/**
 * An event as the page gets it, serialized: the `messages` of beforeModelCall and agentEnd become
 * their length (the page has the history; a context sent to the model is asked for on demand), so
 * a long session's log costs linear bytes; a live turnEnd comes without the reply and results the
 * page got already; long strings are cut.
 */
export function wireEvent(event: AgentEvent, t: number): string {
  let value: object = event;
  if (event.type === 'turnEnd') {
    // The turn's reply and results reach the page as messageEnd, toolExecutionEnd and the history: not a third time.
    const { assistant: _assistant, toolResults: _toolResults, ...rest } = event;
    value = rest;
  } else if (event.type === 'beforeModelCall' || event.type === 'agentEnd') {
    // Read through the view, never through `messages`: that would copy the history once per model call.
    const fields: Record<string, unknown> = {};
    for (const key of Object.keys(event)) {
      fields[key] =
        key === 'messages' ? { length: messagesLength(event) } : (event as unknown as Record<string, unknown>)[key];
    }
    value = fields;
  }
  return `${cutJson(value).slice(0, -1)},"t":${t}}`;
}

function messagesLength(event: AgentEvent & { messages: unknown }): number {
  const view = contextViewOf(event);
  if (view) return view.length;
  const messages = event.messages as unknown;
  if (Array.isArray(messages)) return messages.length;
  // A stored history reference: the history's first `historyPrefix` messages, then `tail`.
  const ref = messages as { historyPrefix?: unknown; tail?: unknown } | null;
  return typeof ref?.historyPrefix === 'number' && Array.isArray(ref.tail) ? ref.historyPrefix + ref.tail.length : 0;
}

const cutLong = (_key: string, value: unknown) =>
  typeof value === 'string' && value.length > MAX_WIRE_STRING ? cut(value) : value;

/** Messages for the page, with the same cut. */
export function wireMessages(messages: readonly Message[]): string {
  return cutJson(messages);
}

/** JSON with long strings cut: a plain stringify first (fast), the cutting replacer only when it could matter. */
function cutJson(value: unknown): string {
  const json = JSON.stringify(value);
  return json.length > MAX_WIRE_STRING ? JSON.stringify(value, cutLong) : json;
}

function cut(text: string): string {
  return `${text.slice(0, MAX_WIRE_STRING)}… (${text.length - MAX_WIRE_STRING} more characters)`;
}

export type { WireEvent };
