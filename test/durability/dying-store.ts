import type { SessionStore } from 'agentchart';
import type { SessionStep } from 'agentchart/store-kit';

/**
 * The store as a process sees it that dies right after writing the step `isLast` picks (`index`:
 * the steps written before it): the steps up to it are kept, nothing after it is written. A
 * subscriber sees an event once its step is written, so a test can cut at any event it saw.
 */
export function diesAfter(store: SessionStore, isLast: (step: SessionStep, index: number) => boolean): SessionStore {
  let written = 0;
  let dead = false;
  const wrote = (step: SessionStep) => (dead = isLast(step, written++));
  return Object.assign(Object.create(store) as SessionStore, {
    commitStep: async (sessionId: string, step: SessionStep) => {
      if (dead) return;
      await store.commitStep(sessionId, step);
      wrote(step);
    },
    ...(store.commitStepSync
      ? {
          commitStepSync: (sessionId: string, step: SessionStep) => {
            if (dead) return;
            store.commitStepSync!(sessionId, step);
            wrote(step);
          },
        }
      : {}),
  });
}
