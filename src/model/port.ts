import type { ModelError } from '../domain/errors.js';
import type { Message, Usage } from '../domain/messages.js';

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

/**
 * One event of a model's stream. A provider failure is an `error` event, never a thrown rejection:
 * the stream ends after `done` or `error`. Tool-call arguments arrive as JSON fragments.
 */
export type ModelStreamEvent =
  | { type: 'start'; model?: string }
  | { type: 'thinkingDelta'; delta: string }
  | { type: 'textDelta'; delta: string }
  | { type: 'toolCallStart'; index: number; id: string; name: string }
  | { type: 'toolCallDelta'; index: number; argumentsDelta: string }
  | { type: 'toolCallEnd'; index: number }
  | { type: 'usage'; usage: Usage }
  | { type: 'done'; stopReason: 'stop' | 'toolUse' | 'length' }
  | { type: 'error'; error: ModelError };

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
