import { costOf, DEFAULT_PRICES, lookupPricing, type PriceTable } from 'agentchart/model-kit';
import { describe, expect, it } from 'vitest';

describe('lookupPricing', () => {
  it('finds exact ids, dated snapshots and provider-prefixed ids; the longest base wins', () => {
    expect(lookupPricing('gpt-4o')).toEqual({ input: 2.5, output: 10, cacheRead: 1.25 });
    expect(lookupPricing('gpt-4o-mini-2024-07-18')).toEqual({ input: 0.15, output: 0.6, cacheRead: 0.075 });
    expect(lookupPricing('gpt-4o-2024-08-06')).toEqual({ input: 2.5, output: 10, cacheRead: 1.25 });
    expect(lookupPricing('claude-sonnet-4-5-20250929')).toEqual({
      input: 3,
      output: 15,
      cacheRead: 0.3,
      cacheWrite: 3.75,
    });
    expect(lookupPricing('claude-sonnet-4-5@20250929')).toEqual({
      input: 3,
      output: 15,
      cacheRead: 0.3,
      cacheWrite: 3.75,
    });
    expect(lookupPricing('openai/gpt-4.1-mini')).toEqual({ input: 0.4, output: 1.6, cacheRead: 0.1 });
  });

  it('gives no price to unlisted models, even successors of listed ones', () => {
    expect(lookupPricing('llama3.1:8b')).toBeUndefined();
    expect(lookupPricing('claude-opus-4-7')).toBeUndefined();
    expect(lookupPricing('gpt-4o-audio-preview')).toBeUndefined();
  });

  it('uses a table the user extends by spreading the defaults', () => {
    const table: PriceTable = { ...DEFAULT_PRICES, 'my-finetune': { input: 0.3, output: 1.2 } };
    expect(lookupPricing('my-finetune', table)).toEqual({ input: 0.3, output: 1.2 });
    expect(lookupPricing('gpt-4o', table)).toEqual(DEFAULT_PRICES['gpt-4o']);
  });

  it('feeds costOf: USD for a call with cache reads and writes', () => {
    const pricing = lookupPricing('claude-haiku-4-5-20251001');
    // 2000×1 + 500×5 + 1000×0.1 + 400×1.25 = 5100 per million.
    expect(costOf({ input: 2000, output: 500, cacheRead: 1000, cacheWrite: 400 }, pricing)).toBeCloseTo(0.0051, 12);
  });
});
