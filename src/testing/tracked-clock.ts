import { SimulatedClock } from 'xstate';

/** A timer this long never fires within an exploration (a time limit nobody turned on). */
export const NEVER_MS = 2 ** 31 - 1;
/** Timers from here on are beyond any exploration's horizon (a lease of NEVER_MS renews every third of it). */
const HORIZON_MS = Math.floor(NEVER_MS / 3);

/**
 * A SimulatedClock that knows its pending timers, so a driver can tell "waiting on time" from a
 * hang, offer "the next timer fires" as a move, and start a fresh clock at the same moment.
 */
export class TrackedClock extends SimulatedClock {
  private readonly deadlines = new Map<number, number>();
  /** Called for every new timer (the race driver makes "its time has come" a scheduler task). */
  onTimer: (id: number, deadline: number) => void = () => {};

  constructor(start = 0) {
    super();
    if (start > 0) this.set(start);
  }

  /** The process this clock belongs to died: its timers never fire and new ones are never set. */
  private stopped = false;

  stop(): void {
    this.stopped = true;
    for (const id of [...this.deadlines.keys()]) this.clearTimeout(id);
  }

  override setTimeout(fn: (...args: unknown[]) => void, timeout: number): number {
    if (this.stopped) return -1;
    const id: number = super.setTimeout(() => {
      this.deadlines.delete(id);
      fn();
    }, timeout);
    // Beyond any horizon: neither offered as a move nor waited for.
    if (timeout >= HORIZON_MS) return id;
    const deadline = this.now() + timeout;
    this.deadlines.set(id, deadline);
    this.onTimer(id, deadline);
    return id;
  }

  override clearTimeout(id: number): void {
    this.deadlines.delete(id);
    super.clearTimeout(id);
  }

  isPending(id: number): boolean {
    return this.deadlines.has(id);
  }

  /** The earliest pending deadline, or null when no timer is pending. */
  nextDeadline(): number | null {
    let next: number | null = null;
    for (const deadline of this.deadlines.values()) if (next === null || deadline < next) next = deadline;
    return next;
  }

  /** Pending timers as delays from now, sorted: part of an exploration state. */
  pendingDelays(): number[] {
    const now = this.now();
    return [...this.deadlines.values()].map((deadline) => deadline - now).sort((a, b) => a - b);
  }

  /** Fires every timer due at the next deadline; false when none is pending. */
  fireNext(): boolean {
    const next = this.nextDeadline();
    if (next === null) return false;
    this.set(Math.max(next, this.now()));
    return true;
  }
}
