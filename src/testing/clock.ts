import { systemClock, type RuntimeClock } from '../runtime/timers.js';

/**
 * The timer half of XState's clock interface (the runtime's own). XState's `SimulatedClock`
 * implements it, so tests can drive delays with `clock.increment(ms)`; the default is the real timers.
 */
export type Clock = RuntimeClock;

export const realClock: Clock = systemClock;

/** Waits `ms` on `clock`; resolves early with `'aborted'` when the signal aborts. */
export function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<'elapsed' | 'aborted'> {
  if (signal.aborted) return Promise.resolve('aborted');
  return new Promise((resolve) => {
    const onAbort = () => {
      clock.clearTimeout(timer);
      resolve('aborted');
    };
    const timer = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve('elapsed');
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves when the signal aborts (a stalled stream waits on this). */
export function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
