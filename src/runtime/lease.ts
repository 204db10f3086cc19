import type { Lease } from '../store/lease.js';
import type { SessionStore } from '../store/types.js';

/** `createAgent({ lease })`: how long a lease lasts without renewal, and who holds it. */
export interface LeaseOptions {
  /** Default 30 s. A run renews its lease every third of it; an owner that dies loses it after it. */
  ttlMs?: number;
  /** Default: a random id per agent. */
  owner?: string;
}

export const DEFAULT_LEASE_TTL_MS = 30_000;

/** The timer functions of an XState clock (a SimulatedClock in tests). */
interface TimerClock {
  setTimeout(fn: (...args: unknown[]) => void, timeout: number): unknown;
  clearTimeout(id: unknown): void;
}

/** Real timers that never keep the process alive by themselves. */
const realClock: TimerClock = {
  setTimeout: (fn, timeout) => {
    const timer = setTimeout(fn, timeout);
    (timer as { unref?: () => void }).unref?.();
    return timer;
  },
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};

/**
 * Holds an agent's lease on its session (one owner per session): acquired before the session loads, renewed
 * every third of the ttl while a run is in progress, released by `agent.close()`. A renewal that
 * fails (the session was taken over, the store is gone) is a store failure: the run stops.
 */
export class LeaseKeeper {
  lease: Lease | null = null;
  private timer: unknown = null;
  private active = false;
  readonly owner: string;
  readonly ttlMs: number;

  constructor(
    private readonly store: SessionStore,
    private readonly sessionId: string,
    options: LeaseOptions,
    clock: TimerClock | undefined,
    private readonly onFailure: (error: unknown) => void,
  ) {
    this.owner = options.owner ?? randomOwner();
    this.ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    this.clock = clock ?? realClock;
  }

  private readonly clock: TimerClock;

  async acquire(): Promise<Lease> {
    this.lease = await this.store.acquire(this.sessionId, this.owner, this.ttlMs);
    return this.lease;
  }

  /** A run started: renew now (the lease may have lapsed while idle), then every third of the ttl. */
  runStarted(): void {
    if (this.active) return;
    this.active = true;
    void this.renew();
    this.schedule();
  }

  runEnded(): void {
    this.active = false;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  async release(): Promise<void> {
    this.runEnded();
    const lease = this.lease;
    this.lease = null;
    if (lease) await this.store.release(this.sessionId, lease);
  }

  private schedule(): void {
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = null;
        if (!this.active) return;
        void this.renew();
        this.schedule();
      },
      Math.max(1, Math.floor(this.ttlMs / 3)),
    );
  }

  private async renew(): Promise<void> {
    const lease = this.lease;
    if (!lease) return;
    try {
      const renewed = await this.store.renew(this.sessionId, lease, this.ttlMs);
      if (this.lease === lease) this.lease = renewed;
    } catch (error) {
      this.runEnded();
      this.onFailure(error);
    }
  }
}

function randomOwner(): string {
  const id = globalThis.crypto?.randomUUID?.() ?? `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  return `agent-${id}`;
}
