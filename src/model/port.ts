import type { Message, Usage } from '../domain/messages.js';
import type { ModelStreamEvent } from './stream-events.js';

export type { ModelStreamEvent };

/** A tool as a provider sees it: name, description and a JSON Schema for its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  systemPrompt?: string;
  messages: Message[];
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
  readonly name: string;
  /** Who serves it, as the GenAI conventions name it ('openai', 'anthropic', …): `beforeModelCall.provider`. */
  readonly provider?: string;
  readonly pricing?: ModelPricing;
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
