import type { Message, Usage } from '../domain/messages.js';
import type { ModelStreamEvent } from './stream-events.js';

export type { ModelStreamEvent };

/** A tool as a provider sees it: name, description and a JSON Schema for its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** One model call: the context to send. */
export interface ModelRequest {
  /** The agent's system prompt. */
  systemPrompt?: string;
  /** The history to send (compacted by the context guard when it had to be). */
  messages: Message[];
  /** The tools' specs: names, descriptions and JSON Schemas. */
  tools: ToolSpec[];
}

/** USD per million tokens; feeds `costUsd`. */
export interface ModelPricing {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** The Model port: every provider adapter and the scripted model implement it. */
export interface Model {
  /** The model's name, as `beforeModelCall.model` and the `chat <model>` span report it. */
  readonly name: string;
  /** Who serves it, as the GenAI conventions name it ('openai', 'anthropic', …): `beforeModelCall.provider`. */
  readonly provider?: string;
  /** USD per million tokens, for `costUsd`. */
  readonly pricing?: ModelPricing;
  /**
   * Streams one attempt's reply as events (text and tool-call deltas, usage, then `done` or an `error` of a
   * classified kind). Must end when `signal` aborts.
   */
  stream(request: ModelRequest, options: { signal: AbortSignal }): AsyncIterable<ModelStreamEvent>;
}

export function costOf(usage: Usage | undefined, pricing: ModelPricing | undefined): number {
  if (!usage || !pricing) return 0;
  const perToken = (n: number | undefined, price: number | undefined) => ((n ?? 0) * (price ?? 0)) / 1_000_000;
  return (
    perToken(usage.input, pricing.input) +
    perToken(usage.output, pricing.output) +
    perToken(usage.cacheRead, pricing.cacheRead ?? pricing.input) +
    perToken(usage.cacheWrite, pricing.cacheWrite ?? pricing.input)
  );
}
