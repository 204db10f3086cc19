import type { AgentEvent } from '../domain/events.js';
import { contextViewOf } from '../domain/history-view.js';
import type { Message } from '../domain/messages.js';
import { AGENT_EVENT_LIMITS, toJsonValue } from '../trace/serialize.js';
import type { WireEvent } from './protocol.js';

/** Strings longer than this are cut on their way to the page (a tool result of megabytes stays in the store). */
export const MAX_WIRE_STRING = 20_000;

/**
 * An event as the page gets it, not yet serialized (a live stream serializes a whole batch at once):
 * the `messages` of beforeModelCall and agentEnd become their length (the page has the history; a
 * context sent to the model is asked for on demand), so a long session's log costs linear bytes; a
 * live turnEnd comes without the reply and results the page got already. The event itself when
 * nothing changes (no copy, no walk: long strings are cut when the batch is serialized); its time
 * travels beside it.
 */
export function wireValue(event: AgentEvent): object {
  switch (event.type) {
    case 'turnEnd':
      // The turn's reply and results reach the page as messageEnd, toolExecutionEnd and the history: not a third time.
      return fieldsOf(event, 'assistant', 'toolResults');
    case 'beforeModelCall':
    case 'agentEnd':
      return withLength(event);
    default:
      return event;
  }
}

/** An event serialized for the page with its time `t` (a snapshot's events, one by one). */
export function wireEvent(event: AgentEvent, t: number): string {
  return `${wireJson(wireValue(event)).slice(0, -1)},"t":${t}}`;
}

/**
 * `value` as JSON with every string longer than `MAX_WIRE_STRING` cut: a plain stringify, and the
 * cutting replacer only when the JSON may hold such a string (rare: a tool result of megabytes).
 * Never throws: what JSON cannot hold (a BigInt, a cycle) is written as text, as a trace writes it.
 */
export function wireJson(value: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch {
    // A value JSON cannot hold (a tool's progress update with a BigInt or a cycle): shown as a trace shows it.
    return JSON.stringify(toJsonValue(value, AGENT_EVENT_LIMITS), cutLong);
  }
  return mayHoldLongString(json) ? JSON.stringify(value, cutLong) : json;
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

/**
 * Whether `json` may hold a string longer than `MAX_WIRE_STRING`, from a few probes instead of a
 * walk over the value (which would touch every event's objects a second time). Such a string's
 * token spans more than `MAX_WIRE_STRING` characters between two unescaped quotes (escapes only
 * lengthen it), so it covers a multiple of `MAX_WIRE_STRING`: at each one, the quotes around it are
 * found. Never misses; a long run without quotes (an array of numbers) answers true, harmlessly.
 */
export function mayHoldLongString(json: string): boolean {
  for (let probe = MAX_WIRE_STRING; probe < json.length; probe += MAX_WIRE_STRING) {
    const open = unescapedQuote(json, probe, -1);
    const close = unescapedQuote(json, probe, 1);
    if ((close < 0 ? json.length : close) - open - 1 > MAX_WIRE_STRING) return true;
  }
  return false;
}

/** The nearest quote at or before `from` (`step` -1) or after it (`step` 1) that is not escaped; -1 if none. */
function unescapedQuote(json: string, from: number, step: 1 | -1): number {
  let at = step < 0 ? json.lastIndexOf('"', from) : json.indexOf('"', from + 1);
  while (at >= 0) {
    let backslashes = 0;
    while (json.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
    at = step < 0 ? json.lastIndexOf('"', at - 1) : json.indexOf('"', at + 1);
  }
  return -1;
}

const BACKSLASH = 92;

const cutLong = (_key: string, value: unknown) =>
  typeof value === 'string' && value.length > MAX_WIRE_STRING ? cut(value) : value;

/** Messages for the page, with the same cut. */
export const wireMessages = (messages: readonly Message[]): string => wireJson(messages);

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
    const events = wireJson(values.slice(from, to));
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
