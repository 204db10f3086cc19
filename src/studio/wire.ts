import type { AgentEvent } from '../domain/events.js';
import { contextViewOf } from '../domain/history-view.js';
import type { Message } from '../domain/messages.js';
import type { WireEvent } from './protocol.js';

/** Strings longer than this are cut on their way to the page (a tool result of megabytes stays in the store). */
export const MAX_WIRE_STRING = 20_000;

/**
 * An event as the page gets it, not yet serialized (a live stream serializes a whole batch at once):
 * the `messages` of beforeModelCall and agentEnd become their length (the page has the history; a
 * context sent to the model is asked for on demand), so a long session's log costs linear bytes; a
 * live turnEnd comes without the reply and results the page got already; long strings are cut. The
 * event itself when nothing changes (no copy); its time travels beside it.
 */
export function wireValue(event: AgentEvent): object {
  switch (event.type) {
    // Ids, numbers and names only: nothing to cut.
    case 'agentStart':
    case 'turnStart':
      return event;
    case 'turnEnd':
      // The turn's reply and results reach the page as messageEnd, toolExecutionEnd and the history: not a third time.
      return fieldsOf(event, 'assistant', 'toolResults');
    case 'beforeModelCall':
      return withLength(event);
    case 'agentEnd':
      return cutIfLong(withLength(event));
    case 'messageUpdate': {
      const delta = event.delta;
      return (delta.type === 'toolCall' ? delta.argumentsDelta : delta.text).length > MAX_WIRE_STRING
        ? cutCopy(event)
        : event;
    }
    default:
      return cutIfLong(event);
  }
}

/** An event serialized for the page with its time `t` (a snapshot's events, one by one). */
export function wireEvent(event: AgentEvent, t: number): string {
  return `${JSON.stringify(wireValue(event)).slice(0, -1)},"t":${t}}`;
}

/** The event's fields but `skip` and `skipToo`, in their order (a loop, no array: this runs twice per turn). */
function fieldsOf(event: AgentEvent, skip: string, skipToo = skip): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key in event) if (key !== skip && key !== skipToo) fields[key] = (event as never)[key];
  return fields;
}

/** Read through the view, never through `messages`: that would copy the history once per model call. */
function withLength(event: Extract<AgentEvent, { messages: unknown }>): Record<string, unknown> {
  const fields = fieldsOf(event, 'messages');
  fields.messages = { length: messagesLength(event) };
  return fields;
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

/** Nesting past this is treated as holding a long string (the cutting copy handles any depth). */
const MAX_WALK_DEPTH = 32;

/** A string longer than `MAX_WIRE_STRING` somewhere in `value`: a walk, no allocation (cheaper than serializing). */
export function hasLongString(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.length > MAX_WIRE_STRING;
  if (typeof value !== 'object' || value === null) return false;
  if (depth > MAX_WALK_DEPTH) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (hasLongString(item, depth + 1)) return true;
    return false;
  }
  for (const key in value) if (hasLongString((value as Record<string, unknown>)[key], depth + 1)) return true;
  return false;
}

const cutIfLong = <T extends object>(value: T): object => (hasLongString(value) ? cutCopy(value) : value);

const cutLong = (_key: string, value: unknown) =>
  typeof value === 'string' && value.length > MAX_WIRE_STRING ? cut(value) : value;

/** A copy with long strings cut (rare: a tool result or reply of more than `MAX_WIRE_STRING` characters). */
function cutCopy(value: object): object {
  return JSON.parse(JSON.stringify(value, cutLong)) as object;
}

/** Messages for the page, with the same cut: a plain stringify first, the cutting replacer only when it could matter. */
export function wireMessages(messages: readonly Message[]): string {
  const json = JSON.stringify(messages);
  return json.length > MAX_WIRE_STRING ? JSON.stringify(messages, cutLong) : json;
}

function cut(text: string): string {
  return `${text.slice(0, MAX_WIRE_STRING)}… (${text.length - MAX_WIRE_STRING} more characters)`;
}

/** A stream message's events take at most this many bytes (a larger event goes alone). */
export const MAX_MESSAGE = 1 << 16;
/** Events serialized at once: a batch is halved while it takes more than `MAX_MESSAGE` bytes. */
const BATCH_EVENTS = 256;

/** Events as the page gets them, not yet serialized, and when each came. */
export interface Wired {
  values: object[];
  times: number[];
}

/**
 * The events as the fields of stream messages, each batch serialized at once (one stringify, not
 * one per event) and at most `MAX_MESSAGE` bytes, so a page's buffer is bounded by its limit plus
 * one message. Times go beside the events, as milliseconds after the batch's first (`t0`).
 */
export function eventBatches({ values, times }: Wired): string[] {
  const batches: string[] = [];
  const add = (from: number, to: number): void => {
    const events = JSON.stringify(values.slice(from, to));
    if (events.length > MAX_MESSAGE && to - from > 1) {
      const middle = (from + to) >> 1;
      add(from, middle);
      add(middle, to);
      return;
    }
    const t0 = times[from] as number;
    let at = '0';
    for (let index = from + 1; index < to; index++) at += `,${(times[index] as number) - t0}`;
    batches.push(`"t0":${t0},"at":[${at}],"events":${events}`);
  };
  for (let from = 0; from < values.length; from += BATCH_EVENTS)
    add(from, Math.min(from + BATCH_EVENTS, values.length));
  return batches;
}

export type { WireEvent };
