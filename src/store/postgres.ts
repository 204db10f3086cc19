import { AgentError } from '../domain/errors.js';
import type { AgentEvent } from '../domain/events.js';
import { acquireLease, holderOf, holderText, releasedLease, renewLease, type Lease } from './lease.js';
import { poolFor, type PgClient, type PgPool } from './postgres-client.js';
import { ensurePostgresSchema } from './postgres-schema.js';
import { ensurePostgresStepTables, postgresSteps } from './postgres-steps.js';
import type { SessionSummary, StoreOptions, TimeTravelStore } from './types.js';
import { assembleCheckpoint, checkStep, expandEvents, parseHead, parseMessage, parseStoredEvent } from './validate.js';

export type PostgresStoreOptions = (
  { connectionString: string; pool?: never } | { pool: PgPool; connectionString?: never }
) &
  StoreOptions & {
    /**
     * The lease clock; default: the database's (`clock_timestamp()`), so processes on several
     * machines agree on expiry. `now` (ms since the epoch) replaces it, e.g. in tests.
     */
    now?: () => number;
  };

export type PostgresStore = TimeTravelStore & {
  /** Ends the pool the store created from a connection string (a pool you passed in stays yours). */
  close(): Promise<void>;
};

interface SessionRow {
  version: number;
  history_length: number;
  event_count: number;
  /** bigint: a string from pg. */
  updated_at: number | string;
}

/**
 * A SessionStore on PostgreSQL (`agentchart/postgres`, the `pg` package as an optional peer): one
 * transaction per step, rows appended per message and per event, tables created on first use and
 * versioned. Leases live in the same database: a step checks its token under the lease row's lock,
 * so a takeover and a fenced owner's step never both succeed.
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  if (!options || typeof options !== 'object' || (typeof options.connectionString !== 'string' && !options.pool)) {
    throw new AgentError('InvalidOptions', 'postgresStore needs { connectionString } or { pool }.');
  }
  const ownsPool = !options.pool;
  let pool: Promise<PgPool> | null = null;
  let ready: Promise<PgPool> | null = null;
  const poolOnce = () =>
    (pool ??= options.pool ? Promise.resolve(options.pool) : poolFor(options.connectionString as string));
  /** The pool, with the schema ensured once (retried after a failure). */
  const open = () =>
    (ready ??= (async () => {
      const p = await poolOnce();
      const client = await p.connect();
      try {
        await ensurePostgresSchema(client);
        await ensurePostgresStepTables(client);
      } finally {
        client.release();
      }
      return p;
    })().catch((error: unknown) => {
      ready = null;
      throw unavailable(error);
    }));

  const withClient = async <T>(work: (client: PgClient) => Promise<T>): Promise<T> => {
    const p = await open();
    let client: PgClient;
    try {
      client = await p.connect();
    } catch (error) {
      throw unavailable(error);
    }
    try {
      return await work(client);
    } catch (error) {
      throw unavailable(error);
    } finally {
      client.release();
    }
  };
  const transaction = <T>(work: (client: PgClient) => Promise<T>): Promise<T> =>
    withClient(async (client) => {
      await client.query('BEGIN');
      try {
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      }
    });

  const nowSql = '(extract(epoch from clock_timestamp()) * 1000)::bigint';
  /** The lease row locked for this transaction (created empty on first use, so the lock always exists). */
  const lockedLease = async (
    client: PgClient,
    sessionId: string,
    mode: 'UPDATE' | 'SHARE',
  ): Promise<{ lease: Lease | null; now: number }> => {
    await client.query(
      "INSERT INTO agentchart_leases (session_id, owner, token, expires_at) VALUES ($1, '', 0, 0) ON CONFLICT (session_id) DO NOTHING",
      [sessionId],
    );
    const row = (
      await client.query(
        `SELECT owner, token, expires_at, holder, ${nowSql} AS now FROM agentchart_leases WHERE session_id = $1 FOR ${mode}`,
        [sessionId],
      )
    ).rows[0] as {
      owner: string;
      token: string;
      expires_at: string;
      holder: string | null;
      now: string;
    };
    const holder = holderOf(row.holder);
    const lease =
      Number(row.token) === 0
        ? null
        : {
            owner: row.owner,
            token: Number(row.token),
            expiresAt: Number(row.expires_at),
            ...(holder ? { holder } : {}),
          };
    return { lease, now: options.now ? options.now() : Number(row.now) };
  };
  const changeLease = (
    sessionId: string,
    decide: (current: Lease | null, now: number) => Lease | null,
  ): Promise<{ lease: Lease | null; version: number }> =>
    transaction(async (client) => {
      const { lease, now } = await lockedLease(client, sessionId, 'UPDATE');
      const next = decide(lease, now);
      if (next)
        await client.query(
          'UPDATE agentchart_leases SET owner = $2, token = $3, expires_at = $4, holder = $5 WHERE session_id = $1',
          [sessionId, next.owner, next.token, next.expiresAt, holderText(next)],
        );
      // Under the lease row's lock: no step of another owner commits between this read and the decision.
      return { lease: next, version: await storedVersion(client, sessionId) };
    });
  const steps = postgresSteps(withClient);
  const storedVersion = async (client: PgClient, sessionId: string): Promise<number> => {
    const row = (await client.query('SELECT version FROM agentchart_sessions WHERE session_id = $1', [sessionId]))
      .rows[0] as { version: number } | undefined;
    return row ? Number(row.version) : -1;
  };
  const historyOf = async (client: PgClient, sessionId: string) =>
    (
      (
        await client.query('SELECT message FROM agentchart_messages WHERE session_id = $1 ORDER BY position', [
          sessionId,
        ])
      ).rows as Array<{ message: string }>
    ).map((row, position) => parseMessage(sessionId, row.message, position));

  return {
    async load(sessionId) {
      return withClient(async (client) => {
        // One snapshot for the head and its messages (a step committing meanwhile is seen whole or not at all).
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        try {
          const row = (await client.query('SELECT head FROM agentchart_sessions WHERE session_id = $1', [sessionId]))
            .rows[0] as { head: string } | undefined;
          return row
            ? assembleCheckpoint(sessionId, parseHead(sessionId, row.head), await historyOf(client, sessionId))
            : null;
        } finally {
          await client.query('COMMIT').catch(() => {});
        }
      });
    },
    async commitStep(sessionId, step) {
      const head = JSON.stringify(step.checkpoint);
      const messages = step.history.messages.map((message) => JSON.stringify(message));
      const events = step.events.map((event) => JSON.stringify(event));
      await transaction(async (client) => {
        // Under the lease row's lock: a takeover (which updates it) and this step are ordered.
        const { lease } = await lockedLease(client, sessionId, 'SHARE');
        const row = (
          await client.query(
            'SELECT version, history_length, event_count, updated_at FROM agentchart_sessions WHERE session_id = $1 FOR UPDATE',
            [sessionId],
          )
        ).rows[0] as SessionRow | undefined;
        const stored = row ?? { version: -1, history_length: 0, event_count: 0, updated_at: 0 };
        checkStep(sessionId, { version: stored.version, historyLength: stored.history_length, lease }, step);
        const committedAt = await steps.record(client, sessionId, step, {
          historyLength: stored.history_length,
          eventCount: stored.event_count,
          version: Number(stored.version),
          committedAt: Number(stored.updated_at),
        });
        const { from } = step.history;
        if (from < stored.history_length)
          await client.query('DELETE FROM agentchart_messages WHERE session_id = $1 AND position >= $2', [
            sessionId,
            from,
          ]);
        if (messages.length > 0) {
          await client.query(
            'INSERT INTO agentchart_messages (session_id, position, message) SELECT $1, $2 + o - 1, m FROM unnest($3::text[]) WITH ORDINALITY AS t(m, o)',
            [sessionId, from, messages],
          );
        }
        if (events.length > 0) {
          await client.query(
            'INSERT INTO agentchart_events (session_id, position, event) SELECT $1, $2 + o - 1, e FROM unnest($3::text[]) WITH ORDINALITY AS t(e, o)',
            [sessionId, stored.event_count, events],
          );
        }
        const values = [
          sessionId,
          step.checkpoint.version,
          step.checkpoint.run !== null,
          head,
          from + messages.length,
          stored.event_count + events.length,
          committedAt,
        ];
        if (row) {
          await client.query(
            'UPDATE agentchart_sessions SET version = $2, running = $3, head = $4, history_length = $5, event_count = $6, updated_at = $7 WHERE session_id = $1',
            values,
          );
        } else {
          // Two first steps racing: the primary key refuses the second, as a stale version.
          const inserted = await client.query(
            'INSERT INTO agentchart_sessions (session_id, version, running, head, history_length, event_count, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (session_id) DO NOTHING',
            values,
          );
          if (inserted.rowCount !== 1)
            throw new AgentError(
              'StaleVersion',
              `session "${sessionId}": version ${step.checkpoint.version} does not follow the stored version (another process created the session)`,
            );
        }
      });
    },
    async loadEvents(sessionId, loadOptions): Promise<AgentEvent[]> {
      return withClient(async (client) => {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        try {
          const rows = (
            await client.query(
              'SELECT event FROM agentchart_events WHERE session_id = $1 AND position >= $2 ORDER BY position',
              [sessionId, loadOptions?.from ?? 0],
            )
          ).rows as Array<{ event: string }>;
          const stored = rows.map((row) => parseStoredEvent(sessionId, row.event));
          const needsHistory = stored.some((event) => 'messages' in event && !Array.isArray(event.messages));
          const history = needsHistory ? await historyOf(client, sessionId) : [];
          return expandEvents(sessionId, stored, () => history);
        } finally {
          await client.query('COMMIT').catch(() => {});
        }
      });
    },
    async list(): Promise<SessionSummary[]> {
      return withClient(async (client) => {
        const rows = (
          await client.query(
            'SELECT session_id, version, running, updated_at FROM agentchart_sessions ORDER BY session_id',
          )
        ).rows as Array<{
          session_id: string;
          version: number;
          running: boolean;
          updated_at: string;
        }>;
        return rows.map((row) => ({
          sessionId: row.session_id,
          version: row.version,
          running: row.running,
          updatedAt: Number(row.updated_at),
        }));
      });
    },
    async delete(sessionId) {
      await transaction(async (client) => {
        await client.query('DELETE FROM agentchart_events WHERE session_id = $1', [sessionId]);
        await client.query('DELETE FROM agentchart_messages WHERE session_id = $1', [sessionId]);
        await client.query('DELETE FROM agentchart_sessions WHERE session_id = $1', [sessionId]);
        await steps.drop(client, sessionId);
      });
    },
    async loadEventsJson(sessionId, loadOptions) {
      return withClient(async (client) => {
        const rows = await client.query(
          'SELECT event FROM agentchart_events WHERE session_id = $1 AND position >= $2 ORDER BY position',
          [sessionId, loadOptions?.from ?? 0],
        );
        return (rows.rows as Array<{ event: string }>).map((row) => row.event);
      });
    },
    steps: (sessionId) => steps.list(sessionId),
    loadStep: (sessionId, version) => steps.load(sessionId, version),
    fork: (from, to, version) => steps.fork(from, to, version),
    async acquire(sessionId, owner, ttlMs, holder) {
      const { lease, version } = await changeLease(sessionId, (current, now) =>
        acquireLease(sessionId, current, owner, ttlMs, now, holder),
      );
      return { ...(lease as Lease), version };
    },
    async renew(sessionId, lease, ttlMs) {
      return (await changeLease(sessionId, (current, now) => renewLease(sessionId, current, lease, ttlMs, now)))
        .lease as Lease;
    },
    async versionOf(sessionId) {
      return withClient((client) => storedVersion(client, sessionId));
    },
    async release(sessionId, lease) {
      await changeLease(sessionId, (current, now) => releasedLease(current, lease, now));
    },
    async close() {
      const p = pool;
      pool = null;
      ready = null;
      if (p && ownsPool) await (await p).end();
    },
  };
}

/** A database error as the runtime reports it; agentchart's own typed errors pass through. */
function unavailable(error: unknown): unknown {
  if (error instanceof AgentError) return error;
  const message =
    error instanceof Error ? error.message || String((error as { code?: unknown }).code ?? error.name) : String(error);
  return new AgentError('StoreUnavailable', `postgres store: ${message}`);
}
