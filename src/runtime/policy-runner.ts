import type { PolicySlot } from '../domain/events.js';

export type PolicyErrorReporter = (slot: PolicySlot, error: unknown) => void;

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  try {
    return String(error);
  } catch {
    return 'unprintable error';
  }
}

/**
 * Runs one policy in isolation: a throw, a rejection or a malformed verdict counts as Continue and
 * is reported. Returns null for "continue" so callers only handle real verdicts.
 */
export async function runIsolated<V extends { verdict: string }>(
  slot: PolicySlot,
  policy: () => V | Promise<V>,
  isVerdict: (value: unknown) => value is V,
  report: PolicyErrorReporter,
): Promise<V | null> {
  try {
    const verdict = await policy();
    if (!isVerdict(verdict)) {
      report(slot, new Error(`policy returned an invalid verdict: ${safeJson(verdict)}`));
      return null;
    }
    return verdict;
  } catch (error) {
    report(slot, error);
    return null;
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export const isVerdictObject = (value: unknown): value is { verdict: string } =>
  typeof value === 'object' && value !== null && typeof (value as { verdict?: unknown }).verdict === 'string';
