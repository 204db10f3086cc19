import type { ModelError } from '../domain/errors.js';
import type { RetryOptions } from './options.js';

/**
 * Backoff before retry number `retry` (1 for the first retry):
 * min(maxDelayMs, baseDelayMs × 2^(retry−1)), jittered into [d/2, d] when `jitter` is on.
 * A provider's retry-after wins over the formula, clamped to `maxRetryAfterMs`.
 */
export function backoffDelay(
  options: RetryOptions,
  retry: number,
  error: ModelError | null,
  random: () => number = Math.random,
): number {
  if (error?.retryAfterMs !== undefined) return Math.min(error.retryAfterMs, options.maxRetryAfterMs);
  const exponential = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, retry - 1));
  if (!options.jitter) return exponential;
  return Math.round(exponential / 2 + random() * (exponential / 2));
}
