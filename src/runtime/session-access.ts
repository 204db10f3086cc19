import type { AcquiredLease } from '../store/lease.js';
import type { SessionCheckpoint, SessionStore } from '../store/types.js';
import type { LeaseKeeper } from './lease.js';
import { restoreSession } from './resume.js';
import type { AgentState } from './run-session.js';

/**
 * How an agent (a cheap handle on a stored session) gets to write it: before a run starts, and
 * before a change between runs, it takes the session's lease and compares the version it loaded
 * with the stored one; if another agent advanced the session, it reloads it first. So it never
 * writes over a newer session and never hands its caller a stale-version error. Between runs it
 * holds nothing: the lease is given up when the run (or the change) is written.
 */
export class SessionAccess {
  constructor(
    private readonly state: AgentState,
    readonly store: SessionStore,
    private readonly sessionId: string,
    readonly keeper: LeaseKeeper,
  ) {}

  /** The store answers at once: the lease is taken (or refused) inside the call that needs it. */
  get sync(): boolean {
    return this.keeper.sync && this.store.loadSync !== undefined;
  }

  /** Takes the lease and brings the agent up to the stored session; throws SessionBusy, a store failure. */
  enterSync(): void {
    this.checkUsable();
    const lease = this.keeper.acquireSync();
    try {
      if (this.behind(lease)) this.reload(this.store.loadSync?.(this.sessionId) ?? null);
    } catch (error) {
      void this.keeper.release();
      throw error;
    }
  }

  async enter(): Promise<void> {
    this.checkUsable();
    const lease = await this.keeper.acquire();
    try {
      if (this.behind(lease)) this.reload(await this.store.load(this.sessionId));
    } catch (error) {
      void this.keeper.release();
      throw error;
    }
  }

  /**
   * Takes the lease without reloading (a parked run's own agent): the version it returns tells
   * whether another agent moved the session on meanwhile.
   */
  takeLeaseSync(): AcquiredLease {
    this.checkUsable();
    return this.held(this.keeper.acquireSync());
  }

  async takeLease(): Promise<AcquiredLease> {
    this.checkUsable();
    return this.held(await this.keeper.acquire());
  }

  /** Loads the stored session again (another agent moved it on). */
  async reloadNow(): Promise<void> {
    this.reload(this.store.loadSync ? this.store.loadSync(this.sessionId) : await this.store.load(this.sessionId));
  }

  private held(lease: AcquiredLease): AcquiredLease {
    const persister = this.state.persister;
    if (persister) persister.token = lease.token;
    return lease;
  }

  /** Gives the lease up once every step written under it has landed. */
  leave(): void {
    const persister = this.state.persister;
    void this.keeper.release(persister?.busy ? persister.settled() : undefined);
  }

  private behind(lease: AcquiredLease): boolean {
    const persister = this.state.persister;
    if (persister) persister.token = lease.token;
    return lease.version !== persister?.version;
  }

  private reload(checkpoint: SessionCheckpoint | null): void {
    restoreSession(this.state, checkpoint);
  }

  /** After a failed write this agent's memory is ahead of its store: a new agent loads the session. */
  private checkUsable(): void {
    const failure = this.state.persister?.failure;
    if (failure) throw failure;
  }
}
