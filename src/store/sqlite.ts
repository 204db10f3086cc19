import type { StatementSync } from 'node:sqlite';
import { AgentError } from '../domain/errors.js';
import type { AgentEvent } from '../domain/events.js';
import { acquireLease, holderOf, holderText, releasedLease, renewLease, type Lease } from './lease.js';
import type { SessionStore, SessionSummary, StoreOptions, TimeTravelStore } from './types.js';
import { SCHEMA_VERSION } from './sqlite-schema.js';
import { DEFAULT_BUSY_TIMEOUT_MS, guarded, openSqliteFile, SqliteUsers } from './sqlite-file.js';
import { sqliteSteps } from './sqlite-steps.js';
import { assembleCheckpoint, checkStep, expandEvents, parseHead, parseMessage, parseStoredEvent } from './validate.js';

type SyncStore = TimeTravelStore &
  Required<Pick<SessionStore, 'commitStepSync' | 'acquireSync' | 'loadSync' | 'attach'>> & {
    /**
     * The creator lets the store go: its write-ahead log is moved into the main file, and the file
     * is closed once every agent on it has closed too.
     */
    close(): void;
  };

export interface SqliteStoreOptions extends StoreOptions {
  /** How long a statement waits for another connection's lock before the store says the file is locked (default 5 s). */
  busyTimeoutMs?: number;
}

/** A lease row's columns; all null when a session row is read with no lease beside it. */
interface LeaseColumns {
  owner: string | null;
  token: number;
  expires_at: number;
  holder: string | null;
}

interface SessionRow {
  sid: number | bigint;
  version: number;
  history_length: number;
  event_count: number;
}

/**
 * The embedded default store: one SQLite file on Node's built-in `node:sqlite` (WAL mode), one
 * transaction per committed step. A step appends its messages and events (rows keyed by position)
 * and rewrites only the small checkpoint row, so its cost does not grow with the session. Calls
 * complete synchronously inside their promise: a step is on disk before the runtime moves on (a
 * SIGKILL right after a step loses nothing of it). When an agent on it closes, and when the store
 * closes, the write-ahead log is moved into the main file: after a clean shutdown the .db alone
 * holds every session.
 */
export function sqliteStore(path: string, options: SqliteStoreOptions = {}): SyncStore {
  const now = options.now ?? Date.now;
  if (typeof path !== 'string' || path.length === 0) {
    throw new AgentError(
      'InvalidOptions',
      `sqliteStore needs a file path (or ":memory:"), got ${JSON.stringify(path)}.`,
    );
  }
  const db = openSqliteFile(path, options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS);
  const users = new SqliteUsers(db);
  const statement = (sql: string): StatementSync => guarded(path, 'open', () => db.prepare(sql));
  /** Every call on a store whose file was closed (by its creator and every agent) is refused, typed. */
  const use = <T>(phase: 'read' | 'write', run: () => T): T => {
    if (!users.open) throw new AgentError('StoreUnavailable', `session store "${path}" was closed`);
    return guarded(path, phase, run);
  };
  const sessionRow = statement('SELECT sid, version, history_length, event_count FROM sessions WHERE session_id = ?');
  // A step's one read: the session row and its lease (the fencing check), and when its last step was committed.
  const stepRow = statement(
    `SELECT s.sid, s.version, s.history_length, s.event_count, s.updated_at, l.owner, l.token, l.expires_at, l.holder
     FROM sessions s LEFT JOIN leases l ON l.session_id = s.session_id WHERE s.session_id = ?`,
  );
  const headRow = statement('SELECT sid, head FROM sessions WHERE session_id = ?');
  const insertSession = statement(
    `INSERT INTO sessions (session_id, version, running, head, history_length, event_count, updated_at)
     VALUES (?, -1, 0, '', 0, 0, 0) RETURNING sid`,
  );
  const updateSession = statement(
    'UPDATE sessions SET version = ?, running = ?, head = ?, history_length = ?, event_count = ?, updated_at = ? WHERE sid = ?',
  );
  const dropMessages = statement('DELETE FROM messages WHERE sid = ? AND position >= ?');
  const insertMessage = statement('INSERT INTO messages (sid, position, message) VALUES (?, ?, ?)');
  const insertEvent = statement('INSERT INTO events (sid, position, event) VALUES (?, ?, ?)');
  const selectMessages = statement('SELECT message FROM messages WHERE sid = ? ORDER BY position');
  const selectEvents = statement('SELECT event FROM events WHERE sid = ? AND position >= ? ORDER BY position');
  const selectAll = statement(
    'SELECT session_id, version, running, updated_at FROM sessions WHERE version >= 0 ORDER BY session_id',
  );
  const deleteSession = statement('DELETE FROM sessions WHERE sid = ?');
  const deleteMessages = statement('DELETE FROM messages WHERE sid = ?');
  const deleteEvents = statement('DELETE FROM events WHERE sid = ?');
  const leaseRow = statement('SELECT owner, token, expires_at, holder FROM leases WHERE session_id = ?');
  const upsertLease = statement(
    `INSERT INTO leases (session_id, owner, token, expires_at, holder) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(session_id) DO UPDATE SET owner = excluded.owner, token = excluded.token,
       expires_at = excluded.expires_at, holder = excluded.holder`,
  );
  const steps = sqliteSteps(statement);
  const versionRow = statement('SELECT version FROM sessions WHERE session_id = ?');
  const versionOf = (sessionId: string): number =>
    Number((versionRow.get(sessionId) as { version: number } | undefined)?.version ?? -1);
  const leaseOf = (sessionId: string): Lease | null => leaseFrom(leaseRow.get(sessionId) as LeaseColumns | undefined);
  const leaseFrom = (row: LeaseColumns | undefined): Lease | null => {
    if (!row || row.owner === null) return null;
    const holder = holderOf(row.holder);
    return {
      owner: row.owner,
      token: Number(row.token),
      expiresAt: Number(row.expires_at),
      ...(holder ? { holder } : {}),
    };
  };
  /** Reads the lease, decides, writes the decision: one transaction, so two processes never both win. */
  const changeLease = (sessionId: string, decide: (current: Lease | null) => Lease | null): Lease | null =>
    use('write', () =>
      transaction(() => {
        const next = decide(leaseOf(sessionId));
        if (next) upsertLease.run(sessionId, next.owner, next.token, next.expiresAt, holderText(next));
        return next;
      }),
    );

  const transaction = <T>(work: () => T): T => {
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      db.exec('COMMIT');
      return result;
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  };
  const snapshot = <T>(work: () => T): T => {
    db.exec('BEGIN');
    try {
      return work();
    } finally {
      if (db.isTransaction) db.exec('COMMIT');
    }
  };
  const historyOf = (sessionId: string, sid: number | bigint) =>
    (selectMessages.all(sid) as Array<{ message: string }>).map((row, position) =>
      parseMessage(sessionId, row.message, position),
    );

  const store: SyncStore = {
    async load(sessionId) {
      return store.loadSync(sessionId);
    },
    async versionOf(sessionId) {
      return use('read', () => versionOf(sessionId));
    },
    loadSync(sessionId) {
      return use('read', () => {
        const row = headRow.get(sessionId) as { sid: number | bigint; head: string } | undefined;
        if (!row || row.head === '') return null;
        return assembleCheckpoint(sessionId, parseHead(sessionId, row.head), historyOf(sessionId, row.sid));
      });
    },
    async commitStep(sessionId, step) {
      store.commitStepSync(sessionId, step);
    },
    commitStepSync(sessionId, step) {
      const head = JSON.stringify(step.checkpoint);
      const messages = step.history.messages.map((message) => JSON.stringify(message));
      const events = step.events.map((event) => JSON.stringify(event));
      use('write', () =>
        transaction(() => {
          const found = stepRow.get(sessionId) as (SessionRow & LeaseColumns & { updated_at: number }) | undefined;
          const row = found ?? {
            ...(insertSession.get(sessionId) as { sid: number | bigint }),
            version: -1,
            history_length: 0,
            event_count: 0,
            updated_at: 0,
          };
          const lease = found ? leaseFrom(found) : leaseOf(sessionId);
          checkStep(sessionId, { version: row.version, historyLength: row.history_length, lease }, step);
          const committedAt = steps.record(row.sid, sessionId, step, {
            historyLength: row.history_length,
            eventCount: row.event_count,
            version: Number(row.version),
            committedAt: Number(row.updated_at),
          });
          let position = step.history.from;
          if (position < row.history_length) dropMessages.run(row.sid, position);
          for (const message of messages) insertMessage.run(row.sid, position++, message);
          let eventPosition = row.event_count;
          for (const event of events) insertEvent.run(row.sid, eventPosition++, event);
          updateSession.run(
            step.checkpoint.version,
            step.checkpoint.run !== null ? 1 : 0,
            head,
            position,
            eventPosition,
            committedAt,
            row.sid,
          );
        }),
      );
    },
    async loadEvents(sessionId, options): Promise<AgentEvent[]> {
      return use('read', () => {
        const row = sessionRow.get(sessionId) as SessionRow | undefined;
        if (!row) return [];
        const rows = selectEvents.all(row.sid, options?.from ?? 0) as Array<{ event: string }>;
        const stored = rows.map((r) => parseStoredEvent(sessionId, r.event));
        return expandEvents(sessionId, stored, () => historyOf(sessionId, row.sid));
      });
    },
    async list(): Promise<SessionSummary[]> {
      const rows = use('read', () => selectAll.all()) as Array<{
        session_id: string;
        version: number;
        running: number;
        updated_at: number;
      }>;
      return rows.map((row) => ({
        sessionId: row.session_id,
        version: row.version,
        running: row.running === 1,
        updatedAt: row.updated_at,
      }));
    },
    async delete(sessionId) {
      use('write', () =>
        transaction(() => {
          const row = sessionRow.get(sessionId) as SessionRow | undefined;
          if (!row) return;
          deleteEvents.run(row.sid);
          deleteMessages.run(row.sid);
          deleteSession.run(row.sid);
          steps.drop(row.sid, sessionId);
        }),
      );
    },
    loadEventsJson: async (sessionId, options) =>
      use('read', () => {
        const row = sessionRow.get(sessionId) as SessionRow | undefined;
        if (!row) return [];
        return (selectEvents.all(row.sid, options?.from ?? 0) as Array<{ event: string }>).map((r) => r.event);
      }),
    steps: async (sessionId) => use('read', () => steps.list(sessionId)),
    // One read transaction: a step committed meanwhile by another process is seen whole or not at all.
    loadStep: async (sessionId, version) => use('read', () => snapshot(() => steps.load(sessionId, version))),
    fork: async (from, to, version) => use('write', () => transaction(() => steps.fork(from, to, version))),
    async acquire(sessionId, owner, ttlMs, holder) {
      return store.acquireSync(sessionId, owner, ttlMs, holder);
    },
    acquireSync(sessionId, owner, ttlMs, holder) {
      let version = -1;
      const lease = changeLease(sessionId, (current) => {
        version = versionOf(sessionId);
        return acquireLease(sessionId, current, owner, ttlMs, now(), holder);
      }) as Lease;
      return { ...lease, version };
    },
    async renew(sessionId, lease, ttlMs) {
      return changeLease(sessionId, (current) => renewLease(sessionId, current, lease, ttlMs, now())) as Lease;
    },
    async release(sessionId, lease) {
      changeLease(sessionId, (current) => releasedLease(current, lease, now()));
    },
    attach: () => users.attach(),
    close: () => users.close(),
  };
  return store;
}

export { SCHEMA_VERSION };
