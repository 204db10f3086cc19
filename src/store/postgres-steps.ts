import type { PgClient } from './postgres-client.js';
import {
  forkTargetExists,
  historyAsOf,
  keyframeRow,
  replayStepRecords,
  sessionNotFound,
  StepRecorder,
  stepNotRecorded,
  withCurrentStep,
  type StepRecordRow,
  type StepRowTag,
  type StoredSession,
} from './step-records.js';
import type { StepCheckpoint, StepSummary } from './step-types.js';
import type { SessionStep } from './types.js';
import { assembleCheckpoint, parseHead, parseMessage } from './validate.js';

/**
 * The per-step records on PostgreSQL, in tables of their own next to the layout of
 * postgres-schema.ts: created on first use when missing, so a database written before they existed
 * is used as it is (its sessions' latest step stays recoverable from their head).
 */
const STEP_TABLES = `
CREATE TABLE IF NOT EXISTS agentchart_steps (
  session_id text NOT NULL,
  version integer NOT NULL,
  base integer NOT NULL,
  event_count integer NOT NULL,
  history_length integer NOT NULL,
  committed_at bigint NOT NULL,
  record text NOT NULL,
  PRIMARY KEY (session_id, version)
);
CREATE TABLE IF NOT EXISTS agentchart_replaced_messages (
  session_id text NOT NULL,
  position integer NOT NULL,
  replaced_at integer NOT NULL,
  message text NOT NULL,
  PRIMARY KEY (session_id, position, replaced_at)
);
`;

/** Creates the tables once per database even with many processes starting together (an advisory lock orders them). */
export async function ensurePostgresStepTables(client: PgClient): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('agentchart step records'))");
    await client.query(STEP_TABLES);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

interface SessionRow {
  version: number;
  head: string;
  history_length: number;
  event_count: number;
  updated_at: string;
}
interface StepRow {
  version: number;
  base: number;
  event_count: number;
  history_length: number;
  committed_at: string;
  record: string;
}

const summaryOf = (row: Omit<StepRow, 'record' | 'base'>): StepSummary => ({
  version: Number(row.version),
  events: Number(row.event_count),
  historyLength: Number(row.history_length),
  committedAt: Number(row.committed_at),
});

type WithClient = <T>(work: (client: PgClient) => Promise<T>) => Promise<T>;

/** Time travel on PostgreSQL; `record` runs inside the step's transaction, the rest in transactions of their own. */
export function postgresSteps(withClient: WithClient) {
  const recorder = new StepRecorder();
  const sessionRow = async (client: PgClient, sessionId: string) =>
    (
      await client.query(
        'SELECT version, head, history_length, event_count, updated_at FROM agentchart_sessions WHERE session_id = $1',
        [sessionId],
      )
    ).rows[0] as SessionRow | undefined;
  const currentOf = (row: SessionRow): StepSummary =>
    summaryOf({
      version: row.version,
      event_count: row.event_count,
      history_length: row.history_length,
      committed_at: row.updated_at,
    });
  /** In a read-consistent transaction the caller opened. */
  const load = async (client: PgClient, sessionId: string, version: number): Promise<StepCheckpoint | null> => {
    const row = await sessionRow(client, sessionId);
    if (!row) return null;
    const chain = (
      (
        await client.query(
          `SELECT version, base, event_count, history_length, committed_at, record FROM agentchart_steps
           WHERE session_id = $1 AND version <= $2
             AND version >= (SELECT base FROM agentchart_steps WHERE session_id = $1 AND version = $2)
           ORDER BY version`,
          [sessionId, version],
        )
      ).rows as StepRow[]
    ).map((step) => ({ ...step, version: Number(step.version), base: Number(step.base) }));
    const target = chain.at(-1);
    const summary = target && target.version === version ? summaryOf(target) : null;
    if (!summary && Number(row.version) !== version) return null;
    const length = summary ? summary.historyLength : Number(row.history_length);
    const current: string[] = [];
    const messages = await client.query(
      'SELECT position, message FROM agentchart_messages WHERE session_id = $1 AND position < $2 ORDER BY position',
      [sessionId, length],
    );
    for (const entry of messages.rows as Array<{ position: number; message: string }>)
      current[Number(entry.position)] = entry.message;
    const replaced = summary
      ? (
          (
            await client.query(
              'SELECT position, replaced_at, message FROM agentchart_replaced_messages WHERE session_id = $1 AND replaced_at > $2 AND position < $3',
              [sessionId, version, length],
            )
          ).rows as Array<{ position: number; replaced_at: number; message: string }>
        ).map((entry) => ({
          position: Number(entry.position),
          replacedAt: Number(entry.replaced_at),
          message: entry.message,
        }))
      : [];
    const history = historyAsOf(sessionId, current, replaced, version, length).map((json, position) =>
      parseMessage(sessionId, json, position),
    );
    if (!summary) {
      const head = parseHead(sessionId, row.head);
      return { ...currentOf(row), checkpoint: assembleCheckpoint(sessionId, head, history), machines: null };
    }
    const { head, machines } = replayStepRecords(sessionId, chain as StepRecordRow[], summary);
    return { ...summary, checkpoint: assembleCheckpoint(sessionId, head, history), machines };
  };
  const snapshot = <T>(work: (client: PgClient) => Promise<T>, mode: 'READ ONLY' | 'READ WRITE'): Promise<T> =>
    withClient(async (client) => {
      await client.query(`BEGIN ISOLATION LEVEL REPEATABLE READ ${mode}`);
      try {
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      }
    });

  const lastTag = async (client: PgClient, sessionId: string): Promise<StepRowTag | null> => {
    const last = (
      await client.query(
        'SELECT version, base, committed_at FROM agentchart_steps WHERE session_id = $1 ORDER BY version DESC LIMIT 1',
        [sessionId],
      )
    ).rows[0] as { version: number; base: number; committed_at: string } | undefined;
    return last
      ? { version: Number(last.version), base: Number(last.base), committedAt: Number(last.committed_at) }
      : null;
  };

  return {
    /** In the step's transaction, before its messages are written: the record, and what it replaces. */
    async record(client: PgClient, sessionId: string, step: SessionStep, stored: StoredSession): Promise<number> {
      const committedAt = Date.now();
      const tag = recorder.lastWritten(sessionId, stored) ?? (await lastTag(client, sessionId));
      // A session stored before step records existed: its head becomes the first record, so that step stays recoverable.
      const old = !tag && step.checkpoint.version > 0 ? await sessionRow(client, sessionId) : undefined;
      if (old) {
        const keyframe = keyframeRow(parseHead(sessionId, old.head), null);
        await client.query(
          'INSERT INTO agentchart_steps (session_id, version, base, event_count, history_length, committed_at, record) VALUES ($1, $2, $2, $3, $4, $5, $6)',
          [sessionId, keyframe.version, old.event_count, old.history_length, old.updated_at, keyframe.record],
        );
      }
      const row = recorder.encode(sessionId, step, tag, committedAt);
      if (step.history.from < stored.historyLength) {
        await client.query(
          `INSERT INTO agentchart_replaced_messages (session_id, position, replaced_at, message)
           SELECT session_id, position, $3, message FROM agentchart_messages WHERE session_id = $1 AND position >= $2`,
          [sessionId, step.history.from, row.version],
        );
      }
      await client.query(
        'INSERT INTO agentchart_steps (session_id, version, base, event_count, history_length, committed_at, record) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [
          sessionId,
          row.version,
          row.base,
          stored.eventCount + step.events.length,
          step.checkpoint.historyLength,
          committedAt,
          row.record,
        ],
      );
      return committedAt;
    },
    /** In the delete's transaction. */
    async drop(client: PgClient, sessionId: string): Promise<void> {
      await client.query('DELETE FROM agentchart_steps WHERE session_id = $1', [sessionId]);
      await client.query('DELETE FROM agentchart_replaced_messages WHERE session_id = $1', [sessionId]);
      recorder.forget(sessionId);
    },
    list: (sessionId: string): Promise<StepSummary[]> =>
      snapshot(async (client) => {
        const row = await sessionRow(client, sessionId);
        if (!row) return [];
        const rows = await client.query(
          'SELECT version, event_count, history_length, committed_at FROM agentchart_steps WHERE session_id = $1 ORDER BY version',
          [sessionId],
        );
        return withCurrentStep((rows.rows as StepRow[]).map(summaryOf), currentOf(row));
      }, 'READ ONLY'),
    load: (sessionId: string, version: number) => snapshot((client) => load(client, sessionId, version), 'READ ONLY'),
    fork: (from: string, to: string, version: number): Promise<void> =>
      snapshot(async (client) => {
        if (!(await sessionRow(client, from))) throw sessionNotFound(from);
        const at = await load(client, from, version);
        if (!at) throw stepNotRecorded(from, version);
        const recorded =
          (await client.query('SELECT 1 FROM agentchart_steps WHERE session_id = $1 AND version = $2', [from, version]))
            .rows.length > 0;
        const { history, ...rest } = at.checkpoint;
        const head = { ...rest, sessionId: to, historyLength: history.length };
        const inserted = await client.query(
          `INSERT INTO agentchart_sessions (session_id, version, running, head, history_length, event_count, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (session_id) DO NOTHING`,
          [to, version, rest.run !== null, JSON.stringify(head), history.length, at.events, Date.now()],
        );
        if (inserted.rowCount !== 1) throw forkTargetExists(to);
        await client.query(
          'INSERT INTO agentchart_messages (session_id, position, message) SELECT $1, o - 1, m FROM unnest($2::text[]) WITH ORDINALITY AS t(m, o)',
          [to, history.map((message) => JSON.stringify(message))],
        );
        await client.query(
          'INSERT INTO agentchart_events (session_id, position, event) SELECT $1, position, event FROM agentchart_events WHERE session_id = $2 AND position < $3',
          [to, from, at.events],
        );
        await client.query(
          `INSERT INTO agentchart_steps (session_id, version, base, event_count, history_length, committed_at, record)
           SELECT $1, version, base, event_count, history_length, committed_at, record FROM agentchart_steps WHERE session_id = $2 AND version <= $3`,
          [to, from, version],
        );
        await client.query(
          `INSERT INTO agentchart_replaced_messages (session_id, position, replaced_at, message)
           SELECT $1, position, replaced_at, message FROM agentchart_replaced_messages WHERE session_id = $2 AND replaced_at <= $3`,
          [to, from, version],
        );
        if (!recorded) {
          await client.query(
            'INSERT INTO agentchart_steps (session_id, version, base, event_count, history_length, committed_at, record) VALUES ($1, $2, $2, $3, $4, $5, $6)',
            [to, version, at.events, history.length, at.committedAt, keyframeRow(head, null).record],
          );
        }
        recorder.forget(to);
      }, 'READ WRITE'),
  };
}
