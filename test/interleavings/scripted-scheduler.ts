import type { TaskScheduler } from '../../src/testing/race/scheduler.js';

export type { TaskScheduler };

interface Task {
  label: string;
  release: () => void;
}

/** Microtask turns the scripted scheduler waits between releases (fast-check's scheduler waits 50). */
const PATIENCE = 100;

/**
 * A deterministic scheduler for written-down interleavings: it releases the pending task whose
 * label contains the next entry of `order`, and the oldest pending task once `order` is used up or
 * when its next entry is not pending yet. `String(scheduler)` lists the labels released, in order.
 */
export function scriptedScheduler(order: readonly string[] = []): TaskScheduler & { released: readonly string[] } {
  const pending: Task[] = [];
  const released: string[] = [];
  let next = 0;
  const pick = (): number => {
    const wanted = order[next];
    if (wanted === undefined) return 0;
    const index = pending.findIndex((task) => task.label.includes(wanted));
    if (index === -1) return 0;
    next++;
    return index;
  };
  const scheduler: TaskScheduler & { released: readonly string[] } = {
    released,
    schedule<T>(task: Promise<T>, label?: string): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        pending.push({ label: label ?? '', release: () => void task.then(resolve, reject) });
      });
    },
    async waitIdle() {
      for (;;) {
        for (let tick = 0; tick < PATIENCE; tick++) await Promise.resolve();
        if (pending.length === 0) return;
        const [task] = pending.splice(pick(), 1);
        released.push(task!.label);
        task!.release();
      }
    },
    count: () => pending.length,
  };
  scheduler.toString = () => `scripted order:\n${released.map((label) => `-> ${label}`).join('\n')}`;
  return scheduler;
}
