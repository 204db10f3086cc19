import { createRequire } from 'node:module';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { AgentError } from '../domain/errors.js';
import type { AgentEvent } from '../domain/events.js';
import type { SessionStore, SessionSummary } from './types.js';
import { parseCheckpoint, parseEvent, staleVersion } from './validate.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions (
  session_id TEXT PRIMARY KEY,
  version INTEGER NOT NULL,
  running INTEGER NOT NULL,
  checkpoint TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
  session_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  event TEXT NOT NULL,
  PRIMARY KEY (session_id, position)
);
`;

type SyncStore = SessionStore & Required<Pick<SessionStore, 'commitStepSync'>> & { close(): void };

/**
 * The embedded default store: one SQLite file on Node's built-in `node:sqlite` (WAL mode), one
 * transaction per committed step. Calls complete synchronously inside their promise, so a step is on
 * disk before the runtime moves on (a SIGKILL right after a step loses nothing of it).
 */
export function sqliteStore(path: string): SyncStore {
  if (typeof path !== 'string' || path.length === 0) {
    throw new AgentError('InvalidOptions', `sqliteStore needs a file path (or ":memory:"), got ${JSON.stringify(path)}.`);
  }
  const db = openDatabase(path);
  const statement = (sql: string): StatementSync => guarded(path, () => db.prepare(sql));
  const loadRow = statement('SELECT checkpoint FROM sessions WHERE session_id = ?');
  const versionRow = statement('SELECT version FROM sessions WHERE session_id = ?');
  const countEvents = statement('SELECT COUNT(*) AS n FROM events WHERE session_id = ?');
  const upsert = statement(
    `INSERT INTO sessions (session_id, version, running, checkpoint, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(session_id) DO UPDATE SET version = excluded.version, running = excluded.running,
       checkpoint = excluded.checkpoint, updated_at = excluded.updated_at`,
  );
  const insertEvent = statement('INSERT INTO events (session_id, position, event) VALUES (?, ?, ?)');
  const selectEvents = statement('SELECT event FROM events WHERE session_id = ? ORDER BY position');
  const selectAll = statement('SELECT session_id, version, running, updated_at FROM sessions ORDER BY session_id');
  const deleteSession = statement('DELETE FROM sessions WHERE session_id = ?');
  const deleteEvents = statement('DELETE FROM events WHERE session_id = ?');

  const transaction = (work: () => void): void => {
    db.exec('BEGIN IMMEDIATE');
    try {
      work();
      db.exec('COMMIT');
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  };

  const store: SyncStore = {
    async load(sessionId) {
      const row = guarded(path, () => loadRow.get(sessionId)) as { checkpoint: string } | undefined;
      return row ? parseCheckpoint(sessionId, row.checkpoint) : null;
    },
    async commitStep(sessionId, step) {
      store.commitStepSync(sessionId, step);
    },
    commitStepSync(sessionId, { checkpoint, events }) {
      const json = JSON.stringify(checkpoint);
      const rows = events.map((event) => JSON.stringify(event));
      guarded(path, () =>
        transaction(() => {
          const stored = (versionRow.get(sessionId) as { version: number } | undefined)?.version ?? -1;
          if (checkpoint.version !== stored + 1) throw staleVersion(sessionId, stored, checkpoint.version);
          let position = Number((countEvents.get(sessionId) as { n: number | bigint } | undefined)?.n ?? 0);
          for (const event of rows) insertEvent.run(sessionId, position++, event);
          upsert.run(sessionId, checkpoint.version, checkpoint.run !== null ? 1 : 0, json, Date.now());
        }),
      );
    },
    async loadEvents(sessionId): Promise<AgentEvent[]> {
      const rows = guarded(path, () => selectEvents.all(sessionId)) as Array<{ event: string }>;
      return rows.map((row) => parseEvent(sessionId, row.event));
    },
    async list(): Promise<SessionSummary[]> {
      const rows = guarded(path, () => selectAll.all()) as Array<{ session_id: string; version: number; running: number; updated_at: number }>;
      return rows.map((row) => ({ sessionId: row.session_id, version: row.version, running: row.running === 1, updatedAt: row.updated_at }));
    },
    async delete(sessionId) {
      guarded(path, () => transaction(() => (deleteEvents.run(sessionId), deleteSession.run(sessionId))));
    },
    close: () => {
      if (db.isOpen) db.close();
    },
  };
  return store;
}

function openDatabase(path: string): DatabaseSync {
  // Loaded on use so the core stays browser-safe and Node < 22.13 gets a typed error, not a crash at import.
  let sqlite: typeof import('node:sqlite');
  try {
    sqlite = createRequire(import.meta.url)('node:sqlite') as typeof import('node:sqlite');
  } catch (error) {
    throw new AgentError('MissingDependency', `sqliteStore needs node:sqlite (Node ≥ 22.13; this is ${process.version}): ${(error as Error).message}`);
  }
  let db: DatabaseSync;
  try {
    db = new sqlite.DatabaseSync(path);
  } catch (error) {
    throw new AgentError('StoreUnavailable', `session store "${path}" cannot be opened: ${(error as Error).message}`);
  }
  try {
    return guarded(path, () => {
      db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
      db.exec(SCHEMA);
      return db;
    });
  } catch (error) {
    db.close();
    throw error;
  }
}

// SQLite's primary result codes (the low byte of an extended code).
const SQLITE_IOERR = 10;
const SQLITE_CORRUPT = 11;
const SQLITE_CANTOPEN = 14;
const SQLITE_READONLY = 8;
const SQLITE_FULL = 13;
const SQLITE_NOTADB = 26;

/** A damaged or foreign file surfaces as a typed error naming the file, never as a silent reset. */
function guarded<T>(path: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof AgentError) throw error;
    const errcode = (error as { errcode?: unknown }).errcode;
    const primary = typeof errcode === 'number' ? errcode & 0xff : -1;
    const message = (error as Error).message;
    if (primary === SQLITE_CORRUPT || primary === SQLITE_NOTADB || primary === SQLITE_IOERR) {
      throw new AgentError('StoreCorrupted', `session store "${path}" is corrupted or truncated: ${message}`);
    }
    if (primary === SQLITE_CANTOPEN || primary === SQLITE_READONLY || primary === SQLITE_FULL) {
      throw new AgentError('StoreUnavailable', `session store "${path}" is unavailable: ${message}`);
    }
    throw error;
  }
}
