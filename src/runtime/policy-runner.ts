import type { PolicySlot } from '../domain/events.js';
import { redactSecrets } from '../domain/redact.js';
import type { Checked } from '../policies/verdicts.js';
import { ABORTED, raceAbort } from './timers.js';

export type PolicyErrorReporter = (slot: PolicySlot, error: unknown) => void;

/** The text of a thrown error as the runtime records it (policy errors, internal errors, …): secrets redacted. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return redactSecrets(error.message || error.name);
  try {
    return redactSecrets(String(error));
  } catch {
    return 'unprintable error';
  }
}

/**
 * Runs one policy in isolation: a throw, a rejection or a verdict not of its slot's shapes counts
 * as Continue and is reported. The wait races `signal`: a policy that never settles cannot hold
 * an aborted run. Returns null for "continue" (and after an abort) so callers only handle real verdicts.
 */
export async function runIsolated<V extends { verdict: string }>(
  slot: PolicySlot,
  policy: () => unknown,
  check: (value: unknown) => Checked<V>,
  report: PolicyErrorReporter,
  signal: AbortSignal,
): Promise<V | null> {
  try {
    const returned = await raceAbort(policy(), signal);
    if (returned === ABORTED) return null;
    const verdict = check(returned);
    if (!verdict.ok) {
      report(slot, new Error(`policy returned an invalid verdict: ${verdict.problem}`));
      return null;
    }
    return verdict.value;
  } catch (error) {
    report(slot, error);
    return null;
  }
}
