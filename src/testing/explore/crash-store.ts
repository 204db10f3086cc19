import type { SessionStore } from '../../store/types.js';

/**
 * One process's view of a shared store: everything goes through until the process "crashes";
 * from then on its writes are lost and its waits never end (a dead process does nothing), while
 * the next process opens the same store afresh.
 */
export interface ProcessStore {
  readonly store: SessionStore;
  /** The process dies; the lease it held is let go, as its expiry would (a store without leases has none). */
  crash(): Promise<void>;
}

type Lease = { owner: string; token: number; expiresAt: number };
type Method = (...args: unknown[]) => unknown;

export function processStore(shared: SessionStore): ProcessStore {
  let dead = false;
  let held: { sessionId: string; lease: Lease } | null = null;
  const store = new Proxy(shared, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      const method = value as Method;
      return (...args: unknown[]) => {
        if (dead) return typeof key === 'string' && key.endsWith('Sync') ? undefined : new Promise(() => {});
        const answer = method.apply(target, args);
        // Sessions shared by several processes: remember the lease this process holds (taken per run).
        const hold = (lease: Lease) => {
          held = { sessionId: String(args[0]), lease };
          return lease;
        };
        if (key === 'acquireSync') return hold(answer as Lease);
        if ((key === 'acquire' || key === 'renew') && answer instanceof Promise) return answer.then(hold);
        if (key === 'release') held = null;
        return answer;
      };
    },
  });
  return {
    store,
    async crash() {
      dead = true;
      const release = (shared as { release?: Method }).release;
      if (held && release) await release.call(shared, held.sessionId, held.lease);
    },
  };
}
