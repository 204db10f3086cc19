import type { AgentEvent } from '../domain/events.js';
import { contextViewOf } from '../domain/history-view.js';
import type { Message } from '../domain/messages.js';
import type { WireEvent } from './protocol.js';

/** Strings longer than this are cut on their way to the page (a tool result of megabytes stays in the store). */
export const MAX_WIRE_STRING = 20_000;

/**
 * An event as the page gets it, serialized: the `messages` of beforeModelCall and agentEnd become
 * their length (the page has the history; a context sent to the model is asked for on demand), so
 * a long session's log costs linear bytes; long strings are cut.
 */
export function wireEvent(event: AgentEvent, t: number): string {
  if (event.type !== 'beforeModelCall' && event.type !== 'agentEnd') return JSON.stringify({ ...event, t }, cutLong);
  // Read through the view, never through `messages`: that would copy the history once per model call.
  const fields: Record<string, unknown> = {};
  for (const key of Object.keys(event)) {
    fields[key] =
      key === 'messages' ? { length: messagesLength(event) } : (event as unknown as Record<string, unknown>)[key];
  }
  fields.t = t;
  return JSON.stringify(fields, cutLong);
}

function messagesLength(event: AgentEvent & { messages: unknown }): number {
  const view = contextViewOf(event);
  if (view) return view.length;
  return Array.isArray(event.messages) ? event.messages.length : 0;
}

const cutLong = (_key: string, value: unknown) =>
  typeof value === 'string' && value.length > MAX_WIRE_STRING ? cut(value) : value;

/** Messages for the page, with the same cut. */
export function wireMessages(messages: readonly Message[]): string {
  return JSON.stringify(messages, cutLong);
}

function cut(text: string): string {
  return `${text.slice(0, MAX_WIRE_STRING)}… (${text.length - MAX_WIRE_STRING} more characters)`;
}

export type { WireEvent };
