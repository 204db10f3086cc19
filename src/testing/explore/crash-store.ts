import type { SessionStore } from '../../store/types.js';

/**
 * One process's view of a shared store: everything goes through until the process "crashes";
 * from then on its writes are lost and its waits never end (a dead process does nothing), while
 * the next process opens the same store afresh.
 */
export interface ProcessStore {
  readonly store: SessionStore;
  crash(): void;
}

const WRITES = new Set(['commitStep', 'commitStepSync', 'delete', 'acquire', 'renew', 'release']);

export function processStore(shared: SessionStore): ProcessStore {
  let dead = false;
  const store = new Proxy(shared, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        if (!dead) return method.apply(target, args);
        if (typeof key === 'string' && WRITES.has(key) && key.endsWith('Sync')) return undefined;
        return new Promise(() => {});
      };
    },
  });
  return {
    store,
    crash: () => {
      dead = true;
    },
  };
}
