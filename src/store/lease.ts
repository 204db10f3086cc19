import { AgentError } from '../domain/errors.js';
import { holderIsGone, type LeaseHolder } from './lease-holder.js';

export type { LeaseHolder };

/**
 * A session's lease (one owner per session): who may write it, until when, and the fencing token. Every
 * acquisition by a new owner gets a larger token; a step carrying an older token is refused, so an
 * owner that lost its session (it paused past its expiry, another took over) can never write again.
 */
export interface Lease {
  owner: string;
  token: number;
  /** Milliseconds since the epoch, on the store's clock. */
  expiresAt: number;
  /** The process holding it (absent in leases stored before it existed, or where no process identity exists). */
  holder?: LeaseHolder;
}

/** What `acquire` returns: the lease, and the session's stored version when it was taken (-1: none yet). */
export interface AcquiredLease extends Lease {
  version: number;
}

/**
 * The decision every store makes in its own transaction when `acquire` is called. A live lease of
 * another owner refuses (SessionBusy) unless its holder ran on the acquirer's host and is gone (a
 * crashed process restarted on the same machine takes its session over at once); across hosts the
 * ttl applies.
 */
export function acquireLease(
  sessionId: string,
  current: Lease | null,
  owner: string,
  ttlMs: number,
  now: number,
  holder?: LeaseHolder,
): Lease {
  checkTtl(ttlMs);
  const held = holder ? { holder } : {};
  if (current && current.owner === owner && current.expiresAt > now)
    return { owner, token: current.token, expiresAt: now + ttlMs, ...held };
  const live = current !== null && current.expiresAt > now;
  if (live && !(holder && current.holder && holderIsGone(current.holder, holder)))
    throw sessionBusy(sessionId, current, now);
  return { owner, token: (current?.token ?? 0) + 1, expiresAt: now + ttlMs, ...held };
}

/** `renew`: only the holder of the newest token may extend it (also after it expired, if nobody took over). */
export function renewLease(sessionId: string, current: Lease | null, lease: Lease, ttlMs: number, now: number): Lease {
  checkTtl(ttlMs);
  if (!current || current.token !== lease.token || current.owner !== lease.owner)
    throw sessionLost(sessionId, lease, current);
  return { ...current, expiresAt: now + ttlMs };
}

/** `release`: expires the lease now (the token stays, so the next owner gets a larger one); a stale lease releases nothing. */
export function releasedLease(current: Lease | null, lease: Lease, now: number): Lease | null {
  if (!current || current.token !== lease.token || current.owner !== lease.owner) return null;
  return { ...current, expiresAt: Math.min(current.expiresAt, now) };
}

/** A step carrying `token` is refused once a newer token exists. Steps without a token are not fenced. */
export function checkFence(sessionId: string, current: Lease | null, token: number | undefined): void {
  if (token !== undefined && current && current.token > token) {
    throw new AgentError(
      'SessionLost',
      `session "${sessionId}": lease token ${token} was fenced by token ${current.token} (owner "${current.owner}"): another agent took the session over`,
    );
  }
}

export function sessionBusy(sessionId: string, current: Lease, now: number): AgentError {
  const seconds = ((current.expiresAt - now) / 1000).toFixed(1);
  const where = current.holder ? `; process ${current.holder.pid} on ${current.holder.host.split('/')[0]}` : '';
  return new AgentError(
    'SessionBusy',
    `session "${sessionId}" is busy: owner "${current.owner}" holds its lease until ${new Date(current.expiresAt).toISOString()} (${seconds} s from now${where})`,
  );
}

/** A lease as a store keeps it in a row: the holder as JSON text (null when absent). */
export function holderText(lease: Lease): string | null {
  return lease.holder ? JSON.stringify(lease.holder) : null;
}

/** The holder column read back; anything unreadable counts as no holder (the ttl then decides). */
export function holderOf(text: unknown): LeaseHolder | undefined {
  if (typeof text !== 'string' || text === '') return undefined;
  try {
    const value = JSON.parse(text) as Partial<LeaseHolder>;
    if (typeof value.host !== 'string' || !Number.isSafeInteger(value.pid)) return undefined;
    const startedAt = Number.isSafeInteger(value.startedAt) ? { startedAt: value.startedAt as number } : {};
    return { host: value.host, pid: value.pid as number, ...startedAt };
  } catch {
    return undefined;
  }
}

function sessionLost(sessionId: string, lease: Lease, current: Lease | null): AgentError {
  const holder = current ? `token ${current.token} of owner "${current.owner}"` : 'no lease';
  return new AgentError(
    'SessionLost',
    `session "${sessionId}": the lease of owner "${lease.owner}" (token ${lease.token}) is no longer held (the store has ${holder})`,
  );
}

function checkTtl(ttlMs: number): void {
  if (!Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > 2_147_483_647)
    throw new AgentError(
      'InvalidInput',
      `a lease's ttl must be an integer number of milliseconds ≥ 1, got ${String(ttlMs)}`,
    );
}
