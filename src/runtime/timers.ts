/**
 * The runtime's waits: the agent's XState clock for delays (a `SimulatedClock` in tests), a real
 * macrotask for fairness, and the run's signal raced against every wait on user code.
 */

/** The timer half of XState's clock interface (`SimulatedClock` implements it). */
export interface RuntimeClock {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
  /** The clock's time in ms, where it tells it (`SimulatedClock` does): lets a timer re-arm instead of restarting. */
  now?(): number;
}

export const systemClock: RuntimeClock = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (id) => globalThis.clearTimeout(id as ReturnType<typeof globalThis.setTimeout>),
  now: () => performance.now(),
};

/** What a raced wait resolves to when the run's signal won. */
export const ABORTED: unique symbol = Symbol('aborted');
export type Aborted = typeof ABORTED;

/**
 * Waits for user code, or for the signal, whichever comes first: a promise that never settles
 * cannot hold the run. A rejection of `work` rejects the race (callers isolate it); a late one
 * after the abort is handled by the race, never unhandled.
 */
export function raceAbort<T>(work: T | PromiseLike<T>, signal: AbortSignal): Promise<Awaited<T> | Aborted> {
  if (signal.aborted) {
    void Promise.resolve(work).then(undefined, () => {});
    return Promise.resolve(ABORTED);
  }
  if (!isThenable(work)) return Promise.resolve(work as Awaited<T>);
  let done: () => void = () => {};
  const aborted = new Promise<Aborted>((resolve) => {
    done = onAbort(signal, () => resolve(ABORTED));
  });
  return Promise.race([Promise.resolve(work), aborted]).then(
    (value) => (done(), value as Awaited<T> | Aborted),
    (error: unknown) => {
      done();
      throw error;
    },
  );
}

type Scheduler = (fn: () => void) => void;

/** setImmediate where it exists (Node), else a MessageChannel message (browsers), else a 0 ms timer. */
const scheduleMacrotask: Scheduler = (() => {
  const immediate = (globalThis as { setImmediate?: (fn: () => void) => unknown }).setImmediate;
  if (typeof immediate === 'function') return (fn) => void immediate(fn);
  if (typeof MessageChannel === 'function') {
    const queue: Array<() => void> = [];
    const channel = new MessageChannel();
    channel.port1.onmessage = () => queue.shift()?.();
    return (fn) => {
      queue.push(fn);
      channel.port2.postMessage(null);
    };
  }
  return (fn) => void globalThis.setTimeout(fn, 0);
})();

/**
 * Resolves on a later macrotask, or at once when the signal aborts. A run awaits it once per turn
 * so timers, I/O and `abort()` from a `setTimeout` get their turn even when the model and the tools
 * never leave the microtask queue (fairness: timers and abort() from a setTimeout still run).
 */
export function nextMacrotask(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const forget = onAbort(signal, resolve);
    scheduleMacrotask(() => {
      forget();
      resolve();
    });
  });
}

/** The callbacks waiting for each signal's abort, behind one listener per signal. */
const abortWaiters = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `fn` when `signal` aborts; returns what forgets it. The run's waits share one 'abort'
 * listener per signal: `addEventListener` costs several µs in Node, and a run waits many times.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let waiters = abortWaiters.get(signal);
  if (!waiters) {
    const all = new Set<() => void>();
    waiters = all;
    abortWaiters.set(signal, all);
    signal.addEventListener(
      'abort',
      () => {
        const called = [...all];
        all.clear();
        for (const each of called) each();
      },
      { once: true },
    );
  }
  const set = waiters;
  set.add(fn);
  return () => void set.delete(fn);
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  try {
    return (
      (typeof value === 'object' || typeof value === 'function') &&
      value !== null &&
      typeof (value as { then?: unknown }).then === 'function'
    );
  } catch {
    return false;
  }
}

/** An effect actor's signal (aborted when the chart leaves its state) joined with the run's. */
export function withRunSignal(run: { signal: AbortSignal }, actorSignal: AbortSignal): AbortSignal {
  return AbortSignal.any([actorSignal, run.signal]);
}
