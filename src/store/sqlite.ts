import type { Database as SqliteDatabase } from 'better-sqlite3';
import { createRequire } from 'node:module';
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

/**
 * The embedded default store: one SQLite file (better-sqlite3, WAL mode), one transaction per
 * committed step. Calls complete synchronously inside their promise, so a step is on disk before
 * the runtime moves on (a SIGKILL right after a step loses nothing of it).
 */
export function sqliteStore(path: string): SessionStore & Required<Pick<SessionStore, 'commitStepSync'>> & { close(): void } {
  const db = openDatabase(path);
  const loadRow = db.prepare<[string], { checkpoint: string }>('SELECT checkpoint FROM sessions WHERE session_id = ?');
  const versionRow = db.prepare<[string], { version: number }>('SELECT version FROM sessions WHERE session_id = ?');
  const countEvents = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM events WHERE session_id = ?');
  const upsert = db.prepare(
    `INSERT INTO sessions (session_id, version, running, checkpoint, updated_at) VALUES (@sessionId, @version, @running, @checkpoint, @updatedAt)
     ON CONFLICT(session_id) DO UPDATE SET version = @version, running = @running, checkpoint = @checkpoint, updated_at = @updatedAt`,
  );
  const insertEvent = db.prepare('INSERT INTO events (session_id, position, event) VALUES (?, ?, ?)');
  const selectEvents = db.prepare<[string], { event: string }>('SELECT event FROM events WHERE session_id = ? ORDER BY position');
  const selectAll = db.prepare<[], { session_id: string; version: number; running: number; updated_at: number }>(
    'SELECT session_id, version, running, updated_at FROM sessions ORDER BY session_id',
  );
  const deleteSession = db.prepare('DELETE FROM sessions WHERE session_id = ?');
  const deleteEvents = db.prepare('DELETE FROM events WHERE session_id = ?');

  const commit = db.transaction((sessionId: string, version: number, running: boolean, checkpoint: string, events: string[]) => {
    const stored = versionRow.get(sessionId)?.version ?? -1;
    if (version !== stored + 1) throw staleVersion(sessionId, stored, version);
    let position = countEvents.get(sessionId)?.n ?? 0;
    for (const event of events) insertEvent.run(sessionId, position++, event);
    upsert.run({ sessionId, version, running: running ? 1 : 0, checkpoint, updatedAt: Date.now() });
  });

  const store: SessionStore & Required<Pick<SessionStore, 'commitStepSync'>> & { close(): void } = {
    async load(sessionId) {
      const row = guarded(path, () => loadRow.get(sessionId));
      return row ? parseCheckpoint(sessionId, row.checkpoint) : null;
    },
    async commitStep(sessionId, step) {
      store.commitStepSync(sessionId, step);
    },
    commitStepSync(sessionId, { checkpoint, events }) {
      const json = JSON.stringify(checkpoint);
      const rows = events.map((event) => JSON.stringify(event));
      guarded(path, () => commit(sessionId, checkpoint.version, checkpoint.run !== null, json, rows));
    },
    async loadEvents(sessionId): Promise<AgentEvent[]> {
      return guarded(path, () => selectEvents.all(sessionId)).map((row) => parseEvent(sessionId, row.event));
    },
    async list(): Promise<SessionSummary[]> {
      return guarded(path, () => selectAll.all()).map((row) => ({ sessionId: row.session_id, version: row.version, running: row.running === 1, updatedAt: row.updated_at }));
    },
    async delete(sessionId) {
      guarded(path, () => db.transaction(() => (deleteEvents.run(sessionId), deleteSession.run(sessionId)))());
    },
    close: () => db.close(),
  };
  return store;
}

function openDatabase(path: string): SqliteDatabase {
  const require = createRequire(import.meta.url);
  let Database: typeof import('better-sqlite3');
  try {
    Database = require('better-sqlite3') as typeof import('better-sqlite3');
  } catch (error) {
    throw new AgentError('InvalidOptions', `sqliteStore needs the optional dependency better-sqlite3 (npm install better-sqlite3): ${(error as Error).message}`);
  }
  return guarded(path, () => {
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(SCHEMA);
    return db;
  });
}

/** A damaged or foreign file surfaces as a typed error naming the file, never as a silent reset. */
function guarded<T>(path: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof AgentError) throw error;
    const code = (error as { code?: string }).code ?? '';
    if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
      throw new AgentError('StoreCorrupted', `session store "${path}" is corrupted: ${(error as Error).message}`);
    }
    throw error;
  }
}
