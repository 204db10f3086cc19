import { describe, expect, it } from 'vitest';
import type { RetryOptions } from 'agentchart';
import { modelError } from 'agentchart/model-kit';
import { backoffDelay } from '../../src/runtime/retry.js';

// backoffDelay(options, retry, error, random): retry 1 is the first retry.
// min(maxDelayMs, baseDelayMs × 2^(retry−1)), jittered into [d/2, d]; a retry-after wins, clamped.

const OPTIONS: RetryOptions = {
  maxAttempts: 5,
  baseDelayMs: 1000,
  maxDelayMs: 30_000,
  jitter: false,
  maxRetryAfterMs: 60_000,
};
const never = () => {
  throw new Error('random() must not be called');
};

describe('backoffDelay', () => {
  it('grows exponentially from baseDelayMs without jitter', () => {
    expect([1, 2, 3, 4, 5].map((retry) => backoffDelay(OPTIONS, retry, null, never))).toEqual([
      1000, 2000, 4000, 8000, 16_000,
    ]);
    expect(backoffDelay({ ...OPTIONS, baseDelayMs: 250 }, 3, modelError('overloaded'), never)).toBe(1000);
  });

  it('is capped at maxDelayMs, even for very large retry numbers', () => {
    expect([5, 6, 7, 50, 5000].map((retry) => backoffDelay(OPTIONS, retry, null, never))).toEqual([
      16_000, 30_000, 30_000, 30_000, 30_000,
    ]);
    expect(backoffDelay({ ...OPTIONS, maxDelayMs: 1500 }, 2, null, never)).toBe(1500);
  });

  it('with jitter, draws the delay from [d/2, d]: the bounds and the midpoint', () => {
    const jittered = { ...OPTIONS, jitter: true };
    expect(backoffDelay(jittered, 1, null, () => 0)).toBe(500);
    expect(backoffDelay(jittered, 1, null, () => 0.5)).toBe(750);
    expect(backoffDelay(jittered, 1, null, () => 0.999_999)).toBe(1000);
    expect(backoffDelay(jittered, 3, null, () => 0)).toBe(2000);
    expect(backoffDelay(jittered, 10, null, () => 0)).toBe(15_000);
    expect(backoffDelay(jittered, 10, null, () => 0.999_999)).toBe(30_000);
  });

  it('with jitter and the real random source, every delay stays inside [d/2, d]', () => {
    const jittered = { ...OPTIONS, jitter: true };
    for (let i = 0; i < 500; i++) {
      const retry = 1 + (i % 7);
      const ceiling = Math.min(30_000, 1000 * 2 ** (retry - 1));
      const delay = backoffDelay(jittered, retry, modelError('rateLimit'));
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
      expect(Number.isInteger(delay)).toBe(true);
    }
  });

  it('a retry-after wins over the formula, larger or smaller, and is not jittered', () => {
    const jittered = { ...OPTIONS, jitter: true };
    expect(backoffDelay(OPTIONS, 1, modelError('rateLimit', 'slow down', { retryAfterMs: 2000 }), never)).toBe(2000);
    expect(backoffDelay(OPTIONS, 5, modelError('rateLimit', 'slow down', { retryAfterMs: 100 }), never)).toBe(100);
    expect(backoffDelay(jittered, 2, modelError('overloaded', 'busy', { retryAfterMs: 45_000 }), never)).toBe(45_000);
    expect(backoffDelay(OPTIONS, 3, modelError('rateLimit', 'now', { retryAfterMs: 0 }), never)).toBe(0);
  });

  it('a retry-after is clamped to maxRetryAfterMs (and may exceed maxDelayMs up to that clamp)', () => {
    expect(backoffDelay(OPTIONS, 1, modelError('rateLimit', 'later', { retryAfterMs: 3_600_000 }), never)).toBe(60_000);
    expect(backoffDelay(OPTIONS, 1, modelError('rateLimit', 'later', { retryAfterMs: 59_999 }), never)).toBe(59_999);
    expect(
      backoffDelay(
        { ...OPTIONS, maxRetryAfterMs: 5000 },
        1,
        modelError('rateLimit', 'later', { retryAfterMs: 6000 }),
        never,
      ),
    ).toBe(5000);
  });
});
