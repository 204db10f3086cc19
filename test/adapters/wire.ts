import type { Usage } from 'agentchart';
import type { ModelPricing } from 'agentchart/model-kit';

/** A model reply, independent of any provider; each wire encodes it as its provider streams it. */
export interface ScriptedReply {
  thinking?: string[];
  text?: string[];
  toolCalls?: Array<{ id: string; name: string; fragments: string[] }>;
  finish: 'stop' | 'toolUse' | 'length';
  usage: Usage;
}

/**
 * One SSE event as written on the wire. `toolFragment` marks an event carrying tool-call JSON,
 * `finish` the events that tell how the reply ended (the suite cuts streams at these marks).
 */
export interface WireEvent {
  sse: string;
  mark?: 'toolFragment' | 'finish';
}

/** The provider error bodies the suite needs, in the provider's documented format. */
export type ErrorBodyKind =
  | 'rateLimit'
  | 'overloaded'
  | 'serverError'
  | 'unauthorized'
  | 'forbidden'
  | 'contextOverflow'
  | 'badRequest'
  | 'gatewayTimeout';

/** A provider's streaming protocol, byte for byte as the provider documents it. */
export interface Wire {
  /** The model id the adapter is configured with (a price-table key). */
  requestModel: string;
  /** The model id the server reports in its stream (a dated snapshot of `requestModel`). */
  responseModel: string;
  /** The published price of `requestModel` (USD per million tokens) the adapter must report. */
  listPrice: ModelPricing;
  /** Whether the protocol reports cache writes (Anthropic does, OpenAI does not). */
  reportsCacheWrite: boolean;
  events(reply: ScriptedReply): WireEvent[];
  /** The provider's index of the reply's i-th tool call. */
  toolIndex(reply: ScriptedReply, i: number): number;
  /** A stream that starts with `text` and then carries the provider's mid-stream "overloaded" error. */
  midStreamOverloaded(text: string): string[];
  errorBody(kind: ErrorBodyKind): string;
}

export function sseText(events: readonly WireEvent[]): string[] {
  return events.map((event) => event.sse);
}

/** Events up to and including the first tool-call JSON fragment: a stream cut mid tool call. */
export function untilFirstToolFragment(events: readonly WireEvent[]): string[] {
  const at = events.findIndex((event) => event.mark === 'toolFragment');
  if (at < 0) throw new Error('reply has no tool fragment');
  return sseText(events.slice(0, at + 1));
}

/** Every event before the ones that say how the reply ended. */
export function withoutFinish(events: readonly WireEvent[]): string[] {
  const at = events.findIndex((event) => event.mark === 'finish');
  return sseText(at < 0 ? events : events.slice(0, at));
}

/** The whole stream as bytes cut every `size` bytes: events, lines and UTF-8 sequences split anywhere. */
export function byteSlices(events: readonly WireEvent[], size: number): Uint8Array[] {
  const bytes = Buffer.from(sseText(events).join(''), 'utf8');
  const slices: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) slices.push(bytes.subarray(offset, offset + size));
  return slices;
}
