/**
 * The part of fast-check's scheduler a race driver uses (structurally: fast-check's own `Scheduler`
 * and a scripted order both implement it, and nothing here imports fast-check).
 */
export interface TaskScheduler {
  schedule<T>(task: Promise<T>, label?: string): Promise<T>;
  waitIdle(): Promise<void>;
  count(): number;
}

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));
const realDelay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface DriveHooks {
  /** The work is over (every run ended). */
  finished(): boolean;
  /** Nothing is scheduled and the work is not over: unblock it (a timer, a stalled stream); false when nothing can. */
  onIdle?(): boolean;
  /** Real milliseconds to wait for work outside the scheduler (real tool bodies doing I/O) before calling it a hang. */
  patienceMs?: number;
}

/** Macrotasks let pass before the driver looks for work outside the scheduler (a run yields one per turn). */
const IDLE_MACROTASKS = 3;
const MAX_ROUNDS = 1_000;

/**
 * Lets the scheduler release every task in the order it picks until the work is over. When nothing
 * is scheduled, promise chains longer than the scheduler's patience and macrotask yields get a few
 * macrotasks, then work outside the scheduler gets `patienceMs` of real time. Returns why it
 * stopped early, or null when the work finished.
 */
export async function drive(scheduler: TaskScheduler, hooks: DriveHooks): Promise<string | null> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    await scheduler.waitIdle();
    for (let spin = 0; spin < IDLE_MACROTASKS && scheduler.count() === 0 && !hooks.finished(); spin++)
      await macrotask();
    if (hooks.patienceMs) {
      const deadline = Date.now() + hooks.patienceMs;
      while (scheduler.count() === 0 && !hooks.finished() && Date.now() < deadline) await realDelay(1);
    }
    if (scheduler.count() > 0) continue;
    if (hooks.finished()) return null;
    if (!hooks.onIdle?.()) return 'hang: nothing scheduled, no timer pending, and the work is not over';
  }
  return `still busy after ${MAX_ROUNDS} rounds of the scheduler`;
}
