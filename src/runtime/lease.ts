import type { AcquiredLease, Lease, LeaseHolder } from '../store/lease.js';
import { thisProcess } from '../store/lease-holder.js';
import type { SessionStore } from '../store/types.js';

/** `createAgent({ lease })`: how long a lease lasts without renewal, and who holds it. */
export interface LeaseOptions {
  /** Default 30 s. A run renews its lease every third of it; an owner that dies loses it after it. */
  ttlMs?: number;
  /** Default: a random id per agent. */
  owner?: string;
  /**
   * The host identity the lease records (default: this machine's pid space, from its boot id and pid
   * namespace). Agents with the same host identity compare process ids: an owner whose process is
   * gone is taken over at once. Two machines must never share one.
   */
  host?: string;
}

export const DEFAULT_LEASE_TTL_MS = 30_000;

/** The timer functions of an XState clock (a SimulatedClock in tests). */
export interface TimerClock {
  setTimeout(fn: (...args: unknown[]) => void, timeout: number): unknown;
  clearTimeout(id: unknown): void;
}

/** Real timers that never keep the process alive by themselves. */
export const realClock: TimerClock = {
  setTimeout: (fn, timeout) => {
    const timer = setTimeout(fn, timeout);
    (timer as { unref?: () => void }).unref?.();
    return timer;
  },
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};

/**
 * An agent's lease on its session: taken when a run starts (or a write between runs), renewed
 * every third of the ttl while the run goes on, given up when it ends. Calls to an async store go
 * one after another, so a release never overtakes the next acquire. A renewal that fails (the
 * session was taken over, the store is gone) is a store failure: the run stops.
 */
export class LeaseKeeper {
  lease: Lease | null = null;
  private timer: unknown = null;
  private renewing = false;
  private queue: Promise<unknown> = Promise.resolve();
  readonly owner: string;
  readonly ttlMs: number;
  readonly holder: LeaseHolder | undefined;
  private readonly clock: TimerClock;

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
    const process = thisProcess();
    this.holder = process ? { ...process, ...(options.host !== undefined ? { host: options.host } : {}) } : undefined;
  }

  /** The store answers at once (an embedded store). */
  get sync(): boolean {
    return this.store.acquireSync !== undefined;
  }

  acquireSync(): AcquiredLease {
    const acquire = this.store.acquireSync as NonNullable<SessionStore['acquireSync']>;
    this.keepPendingRelease();
    return this.took(acquire(this.sessionId, this.owner, this.ttlMs, this.holder));
  }

  acquire(): Promise<AcquiredLease> {
    this.keepPendingRelease();
    return this.next(async () =>
      this.took(await this.store.acquire(this.sessionId, this.owner, this.ttlMs, this.holder)),
    );
  }

  /** A release still waiting for its writes is dropped: the lease goes on into the next acquire. */
  private keepPendingRelease(): void {
    if (this.releasing) this.releasing.cancelled = true;
    this.releasing = null;
  }

  /** Renews every third of the ttl until `stopRenewing` (a run in progress). */
  startRenewing(): void {
    if (this.renewing) return;
    this.renewing = true;
    this.schedule();
  }

  stopRenewing(): void {
    this.renewing = false;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * Gives the lease up once `written` settles (the writes it covered). An acquire meanwhile keeps
   * it instead: the same owner's lease simply goes on into the next run.
   */
  release(written?: Promise<void>): Promise<void> {
    this.stopRenewing();
    const lease = this.lease;
    this.lease = null;
    if (!lease) return this.queue.then(() => {});
    // Nothing in flight (an embedded store): released now, so another agent may start at once;
    // close() and the next acquire wait for it (an async store's round trip).
    if (!written && (this.sync || this.pending === 0)) {
      const released = this.store.release(this.sessionId, lease).catch(() => {});
      this.queue = this.queue.then(() => released);
      return released;
    }
    const pending = { cancelled: false };
    this.releasing = pending;
    return this.next(async () => {
      await written;
      if (pending.cancelled) return;
      await this.store.release(this.sessionId, lease);
    }).catch(() => {
      // A release that fails leaves the lease to expire: nothing was written under it any more.
    });
  }

  private releasing: { cancelled: boolean } | null = null;

  private took(lease: AcquiredLease): AcquiredLease {
    const { version: _version, ...held } = lease;
    this.lease = held;
    return lease;
  }

  /** Calls to the store in flight or waiting their turn. */
  private pending = 0;

  private next<T>(work: () => Promise<T>): Promise<T> {
    this.pending += 1;
    const done = this.queue.then(work, work).finally(() => (this.pending -= 1));
    this.queue = done.catch(() => {});
    return done;
  }

  private schedule(): void {
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = null;
        if (!this.renewing) return;
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
      const renewed = await this.next(() => this.store.renew(this.sessionId, lease, this.ttlMs));
      if (this.lease === lease) this.lease = renewed;
    } catch (error) {
      if (this.lease !== lease) return;
      this.stopRenewing();
      this.onFailure(error);
    }
  }
}

function randomOwner(): string {
  const id = globalThis.crypto?.randomUUID?.() ?? `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  return `agent-${id}`;
}
