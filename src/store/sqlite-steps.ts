import type { DatabaseSync, StatementSync } from 'node:sqlite';
import {
  forkTargetExists,
  historyAsOf,
  keyframeRow,
  replayStepRecords,
  sessionNotFound,
  StepRecorder,
  stepNotRecorded,
  withCurrentStep,
  type ReplacedMessage,
  type StepRecordRow,
  type StepRowTag,
  type StoredSession,
} from './step-records.js';
import type { StepCheckpoint, StepSummary } from './step-types.js';
import type { SessionStep } from './types.js';
import { assembleCheckpoint, parseHead, parseMessage } from './validate.js';

/**
 * The per-step records in their own tables, next to the layout of sqlite-schema.ts: created on
 * open when missing, so a file written before they existed opens as it is (its sessions' latest
 * step stays recoverable from their head; every later step gets a record).
 */
const STEP_TABLES = `
CREATE TABLE IF NOT EXISTS steps (
  sid INTEGER NOT NULL,
  version INTEGER NOT NULL,
  base INTEGER NOT NULL,
  event_count INTEGER NOT NULL,
  history_length INTEGER NOT NULL,
  committed_at INTEGER NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (sid, version)
);
CREATE TABLE IF NOT EXISTS replaced_messages (
  sid INTEGER NOT NULL,
  position INTEGER NOT NULL,
  replaced_at INTEGER NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (sid, position, replaced_at)
);
`;

export function ensureStepTables(db: DatabaseSync): void {
  db.exec(STEP_TABLES);
}

type Sid = number | bigint;
interface SessionRow {
  sid: Sid;
  version: number;
  head: string;
  history_length: number;
  event_count: number;
  updated_at: number;
}
interface StepRow {
  version: number;
  base: number;
  event_count: number;
  history_length: number;
  committed_at: number;
  record: string;
}

const summaryOf = (row: Omit<StepRow, 'record' | 'base'>): StepSummary => ({
  version: Number(row.version),
  events: Number(row.event_count),
  historyLength: Number(row.history_length),
  committedAt: Number(row.committed_at),
});

/** Time travel on one SQLite file; the store calls these inside its own transactions. */
export function sqliteSteps(statement: (sql: string) => StatementSync) {
  const recorder = new StepRecorder();
  const session = statement(
    'SELECT sid, version, head, history_length, event_count, updated_at FROM sessions WHERE session_id = ? AND version >= 0',
  );
  const lastRow = statement(
    'SELECT version, base, committed_at FROM steps WHERE sid = ? ORDER BY version DESC LIMIT 1',
  );
  const insertStep = statement(
    'INSERT INTO steps (sid, version, base, event_count, history_length, committed_at, record) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const archive = statement(
    'INSERT INTO replaced_messages (sid, position, replaced_at, message) SELECT sid, position, ?, message FROM messages WHERE sid = ? AND position >= ?',
  );
  const listRows = statement(
    'SELECT version, event_count, history_length, committed_at FROM steps WHERE sid = ? ORDER BY version',
  );
  const chainRows = statement(
    `SELECT version, base, event_count, history_length, committed_at, record FROM steps
     WHERE sid = ? AND version <= ? AND version >= (SELECT base FROM steps WHERE sid = ? AND version = ?) ORDER BY version`,
  );
  const replacedRows = statement(
    'SELECT position, replaced_at, message FROM replaced_messages WHERE sid = ? AND replaced_at > ? AND position < ?',
  );
  const messageRows = statement(
    'SELECT position, message FROM messages WHERE sid = ? AND position < ? ORDER BY position',
  );
  const insertSession = statement(
    'INSERT INTO sessions (session_id, version, running, head, history_length, event_count, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING sid',
  );
  const existing = statement('SELECT version FROM sessions WHERE session_id = ?');
  const insertMessage = statement('INSERT INTO messages (sid, position, message) VALUES (?, ?, ?)');
  const copyEvents = statement(
    'INSERT INTO events (sid, position, event) SELECT ?, position, event FROM events WHERE sid = ? AND position < ?',
  );
  const copySteps = statement(
    `INSERT INTO steps (sid, version, base, event_count, history_length, committed_at, record)
     SELECT ?, version, base, event_count, history_length, committed_at, record FROM steps WHERE sid = ? AND version <= ?`,
  );
  const copyReplaced = statement(
    `INSERT INTO replaced_messages (sid, position, replaced_at, message)
     SELECT ?, position, replaced_at, message FROM replaced_messages WHERE sid = ? AND replaced_at <= ?`,
  );
  const hasStep = statement('SELECT 1 AS found FROM steps WHERE sid = ? AND version = ?');
  const dropSteps = statement('DELETE FROM steps WHERE sid = ?');
  const dropReplaced = statement('DELETE FROM replaced_messages WHERE sid = ?');

  const lastTag = (sid: Sid): StepRowTag | null => {
    const last = lastRow.get(sid) as { version: number; base: number; committed_at: number } | undefined;
    return last
      ? { version: Number(last.version), base: Number(last.base), committedAt: Number(last.committed_at) }
      : null;
  };

  const currentOf = (row: SessionRow): StepSummary =>
    summaryOf({
      version: row.version,
      event_count: row.event_count,
      history_length: row.history_length,
      committed_at: row.updated_at,
    });

  const load = (sessionId: string, version: number): StepCheckpoint | null => {
    const row = session.get(sessionId) as SessionRow | undefined;
    if (!row) return null;
    const chain = (chainRows.all(row.sid, version, row.sid, version) as unknown as StepRow[]).map((step) => ({
      ...step,
      version: Number(step.version),
      base: Number(step.base),
    }));
    const target = chain.at(-1);
    if (!target || target.version !== version) {
      if (Number(row.version) !== version) return null;
      const history = messagesOf(sessionId, row.sid, row.history_length, [], version);
      const head = parseHead(sessionId, row.head);
      return { ...currentOf(row), checkpoint: assembleCheckpoint(sessionId, head, history), machines: null };
    }
    const summary = summaryOf(target);
    const { head, machines } = replayStepRecords(sessionId, chain as StepRecordRow[], summary);
    const replaced = (
      replacedRows.all(row.sid, version, summary.historyLength) as Array<{
        position: number;
        replaced_at: number;
        message: string;
      }>
    ).map((entry) => ({
      position: Number(entry.position),
      replacedAt: Number(entry.replaced_at),
      message: entry.message,
    }));
    const history = messagesOf(sessionId, row.sid, summary.historyLength, replaced, version);
    return { ...summary, checkpoint: assembleCheckpoint(sessionId, head, history), machines };
  };

  const messagesOf = (sessionId: string, sid: Sid, length: number, replaced: ReplacedMessage[], version: number) => {
    const current: string[] = [];
    for (const entry of messageRows.all(sid, length) as Array<{ position: number; message: string }>)
      current[Number(entry.position)] = entry.message;
    return historyAsOf(sessionId, current, replaced, version, length).map((json, position) =>
      parseMessage(sessionId, json, position),
    );
  };

  /** A session stored before step records existed: its head becomes the first record, so that step stays recoverable. */
  const keepStoredHead = (sid: Sid, sessionId: string) => {
    const row = session.get(sessionId) as SessionRow | undefined;
    if (!row) return;
    const keyframe = keyframeRow(parseHead(sessionId, row.head), null);
    insertStep.run(
      sid,
      keyframe.version,
      keyframe.base,
      row.event_count,
      row.history_length,
      row.updated_at,
      keyframe.record,
    );
  };

  return {
    /** In the step's transaction, before its messages are written: the record, and what it replaces. */
    record(sid: Sid, sessionId: string, step: SessionStep, stored: StoredSession) {
      const committedAt = Date.now();
      const tag = recorder.lastWritten(sessionId, stored) ?? lastTag(sid);
      if (!tag && step.checkpoint.version > 0) keepStoredHead(sid, sessionId);
      const row = recorder.encode(sessionId, step, tag, committedAt);
      if (step.history.from < stored.historyLength) archive.run(row.version, sid, step.history.from);
      insertStep.run(
        sid,
        row.version,
        row.base,
        stored.eventCount + step.events.length,
        step.checkpoint.historyLength,
        committedAt,
        row.record,
      );
      return committedAt;
    },
    /** In the delete's transaction. */
    drop(sid: Sid, sessionId: string) {
      dropSteps.run(sid);
      dropReplaced.run(sid);
      recorder.forget(sessionId);
    },
    list(sessionId: string): StepSummary[] {
      const row = session.get(sessionId) as SessionRow | undefined;
      if (!row) return [];
      const recorded = (listRows.all(row.sid) as unknown as StepRow[]).map(summaryOf);
      return withCurrentStep(recorded, currentOf(row));
    },
    load,
    /** In one transaction (the store's): reads `from`, writes `to`. */
    fork(from: string, to: string, version: number): void {
      const source = session.get(from) as SessionRow | undefined;
      if (!source) throw sessionNotFound(from);
      if (existing.get(to)) throw forkTargetExists(to);
      const at = load(from, version);
      if (!at) throw stepNotRecorded(from, version);
      const recorded = hasStep.get(source.sid, version) !== undefined;
      const { history, ...rest } = at.checkpoint;
      const head = { ...rest, sessionId: to, historyLength: history.length };
      const { sid } = insertSession.get(
        to,
        version,
        rest.run !== null ? 1 : 0,
        JSON.stringify(head),
        history.length,
        at.events,
        Date.now(),
      ) as { sid: Sid };
      history.forEach((message, position) => insertMessage.run(sid, position, JSON.stringify(message)));
      copyEvents.run(sid, source.sid, at.events);
      copySteps.run(sid, source.sid, version);
      copyReplaced.run(sid, source.sid, version);
      if (!recorded) {
        const keyframe = keyframeRow(head, null);
        insertStep.run(sid, version, version, at.events, history.length, at.committedAt, keyframe.record);
      }
      recorder.forget(to);
    },
  };
}
