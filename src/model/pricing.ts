import type { ModelPricing } from './port.js';

/** Model id → USD per million tokens. Extend it by spreading: `{ ...DEFAULT_PRICES, 'my-model': {…} }`. */
export type PriceTable = Readonly<Record<string, ModelPricing>>;

/**
 * List prices (USD per million tokens) of common models, as published by OpenAI and Anthropic in
 * late 2025. Prices change: pass `pricing` (or your own table) to an adapter to override them.
 * OpenAI bills no cache writes, so its entries leave `cacheWrite` out.
 */
export const DEFAULT_PRICES: PriceTable = Object.freeze({
  'gpt-5': { input: 1.25, output: 10, cacheRead: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cacheRead: 0.025 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cacheRead: 0.005 },
  'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cacheRead: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cacheRead: 0.025 },
  'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cacheRead: 0.075 },
  o3: { input: 2, output: 8, cacheRead: 0.5 },
  'o3-mini': { input: 1.1, output: 4.4, cacheRead: 0.55 },
  'o4-mini': { input: 1.1, output: 4.4, cacheRead: 0.275 },
  'claude-opus-4-5': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  'claude-opus-4-1': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  'claude-opus-4': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  'claude-sonnet-4-5': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-sonnet-4': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-3-7-sonnet': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-haiku-4-5': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
  'claude-3-haiku': { input: 0.25, output: 1.25, cacheRead: 0.03, cacheWrite: 0.3 },
});

/**
 * A dated snapshot or alias of a listed model: `-20250929`, `-2024-08-06`, `@20250929`, `-latest`.
 * Only these suffixes inherit a price, so an unlisted successor (`claude-opus-4-6`) gets none
 * rather than its predecessor's.
 */
const SNAPSHOT_SUFFIX = /^([-@]\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$/;

/**
 * The price of a model id: an exact entry, else the entry it is a dated snapshot of. A provider
 * prefix (`openai/gpt-4o`, `anthropic/claude-…`) is ignored. Unknown models have no price (cost 0).
 */
export function lookupPricing(modelId: string, table: PriceTable = DEFAULT_PRICES): ModelPricing | undefined {
  const candidates = [modelId, modelId.slice(modelId.lastIndexOf('/') + 1)];
  for (const id of candidates) {
    const exact = table[id];
    if (exact) return exact;
    const base = Object.keys(table)
      .filter((key) => id.startsWith(key) && SNAPSHOT_SUFFIX.test(id.slice(key.length)))
      .sort((a, b) => b.length - a.length)[0];
    if (base !== undefined) return table[base];
  }
  return undefined;
}

/** The pricing an adapter reports: an explicit `pricing` wins over the table lookup. */
export function resolvePricing(
  modelId: string,
  options: { pricing?: ModelPricing; priceTable?: PriceTable },
): ModelPricing | undefined {
  return options.pricing ?? lookupPricing(modelId, options.priceTable ?? DEFAULT_PRICES);
}
