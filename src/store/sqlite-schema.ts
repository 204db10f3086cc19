import type { DatabaseSync } from 'node:sqlite';
import { AgentError } from '../domain/errors.js';
import { SessionCheckpointSchema } from './types.js';

/** `PRAGMA user_version` of the layout below; files of an older layout are migrated on open. */
export const SCHEMA_VERSION = 3;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions (
  sid INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL UNIQUE,
  version INTEGER NOT NULL,
  running INTEGER NOT NULL,
  head TEXT NOT NULL,
  history_length INTEGER NOT NULL,
  event_count INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
  sid INTEGER NOT NULL,
  position INTEGER NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (sid, position)
);
CREATE TABLE IF NOT EXISTS events (
  sid INTEGER NOT NULL,
  position INTEGER NOT NULL,
  event TEXT NOT NULL,
  PRIMARY KEY (sid, position)
);
CREATE TABLE IF NOT EXISTS leases (
  session_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  token INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  holder TEXT
);
`;

/** Layout 3: a lease records the process holding it (JSON of LeaseHolder), so a dead owner is taken over at once. */
function addLeaseHolders(db: DatabaseSync): void {
  const has = db.prepare("SELECT 1 FROM pragma_table_info('leases') WHERE name = 'holder'").get() !== undefined;
  if (!has) db.exec('ALTER TABLE leases ADD COLUMN holder TEXT');
}

/**
 * Creates the tables, or brings an older file up to date in one transaction: layout 1 (one row per
 * session holding the whole checkpoint) is split into rows, layout 2 gains the lease holders. A file
 * from a newer version is refused.
 */
export function migrateSqlite(db: DatabaseSync): void {
  const version = Number((db.prepare('PRAGMA user_version').get() as { user_version: number | bigint }).user_version);
  if (version === SCHEMA_VERSION) return;
  if (version > SCHEMA_VERSION) {
    throw new AgentError(
      'StoreUnavailable',
      `the session store was written by a newer agentchart (layout ${version}; this one reads ${SCHEMA_VERSION})`,
    );
  }
  db.exec('BEGIN IMMEDIATE');
  try {
    const legacy =
      db.prepare("SELECT 1 FROM pragma_table_info('sessions') WHERE name = 'checkpoint'").get() !== undefined;
    if (legacy) {
      db.exec('ALTER TABLE sessions RENAME TO sessions_v1; ALTER TABLE events RENAME TO events_v1;');
      db.exec(SCHEMA);
      copyLegacySessions(db);
      db.exec('DROP TABLE sessions_v1; DROP TABLE events_v1;');
    } else {
      db.exec(SCHEMA);
    }
    addLeaseHolders(db);
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    db.exec('COMMIT');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

function copyLegacySessions(db: DatabaseSync): void {
  const insertSession = db.prepare(
    'INSERT INTO sessions (session_id, version, running, head, history_length, event_count, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING sid',
  );
  const insertMessage = db.prepare('INSERT INTO messages (sid, position, message) VALUES (?, ?, ?)');
  const copyEvents = db.prepare(
    'INSERT INTO events (sid, position, event) SELECT ?, position, event FROM events_v1 WHERE session_id = ? ORDER BY position',
  );
  const countEvents = db.prepare('SELECT COUNT(*) AS n FROM events_v1 WHERE session_id = ?');
  const rows = db
    .prepare('SELECT session_id, version, running, checkpoint, updated_at FROM sessions_v1')
    .all() as Array<{
    session_id: string;
    version: number;
    running: number;
    checkpoint: string;
    updated_at: number;
  }>;
  for (const row of rows) {
    const parsed = SessionCheckpointSchema.safeParse(JSON.parse(row.checkpoint));
    if (!parsed.success)
      throw new AgentError(
        'StoreCorrupted',
        `session "${row.session_id}": the stored checkpoint is invalid (while migrating the store)`,
      );
    const { history, ...rest } = parsed.data;
    const events = Number((countEvents.get(row.session_id) as { n: number | bigint }).n);
    const head = JSON.stringify({ ...rest, historyLength: history.length });
    const { sid } = insertSession.get(
      row.session_id,
      row.version,
      row.running,
      head,
      history.length,
      events,
      row.updated_at,
    ) as { sid: number | bigint };
    history.forEach((message, position) => insertMessage.run(sid, position, JSON.stringify(message)));
    copyEvents.run(sid, row.session_id);
  }
}
