import { AgentError } from '../domain/errors.js';
import type { PgClient } from './postgres-client.js';

/** The layout's version, kept in `agentchart_meta`; a database of a newer layout is refused. */
export const POSTGRES_SCHEMA_VERSION = 2;

const LAYOUT_1 = `
CREATE TABLE IF NOT EXISTS agentchart_sessions (
  session_id text PRIMARY KEY,
  version integer NOT NULL,
  running boolean NOT NULL,
  head text NOT NULL,
  history_length integer NOT NULL,
  event_count integer NOT NULL,
  updated_at bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS agentchart_messages (
  session_id text NOT NULL,
  position integer NOT NULL,
  message text NOT NULL,
  PRIMARY KEY (session_id, position)
);
CREATE TABLE IF NOT EXISTS agentchart_events (
  session_id text NOT NULL,
  position integer NOT NULL,
  event text NOT NULL,
  PRIMARY KEY (session_id, position)
);
CREATE TABLE IF NOT EXISTS agentchart_leases (
  session_id text PRIMARY KEY,
  owner text NOT NULL,
  token bigint NOT NULL,
  expires_at bigint NOT NULL
);
`;

/** Layout 2: a lease records the process holding it (JSON of LeaseHolder), so a dead owner is taken over at once. */
const LAYOUT_2 = 'ALTER TABLE agentchart_leases ADD COLUMN IF NOT EXISTS holder text';

/**
 * Creates the tables on first use, once per database even with many processes starting together
 * (a transaction-scoped advisory lock serializes them), and records the layout's version.
 */
export async function ensurePostgresSchema(client: PgClient): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('agentchart schema'))");
    await client.query('CREATE TABLE IF NOT EXISTS agentchart_meta (key text PRIMARY KEY, value text NOT NULL)');
    const row = (await client.query("SELECT value FROM agentchart_meta WHERE key = 'schema_version'")).rows[0] as
      { value: string } | undefined;
    const version = row ? Number(row.value) : 0;
    if (version > POSTGRES_SCHEMA_VERSION) {
      throw new AgentError(
        'StoreUnavailable',
        `postgres store: the database holds agentchart layout ${version}; this version reads ${POSTGRES_SCHEMA_VERSION}`,
      );
    }
    if (version < POSTGRES_SCHEMA_VERSION) {
      await client.query(LAYOUT_1);
      await client.query(LAYOUT_2);
      await client.query(
        "INSERT INTO agentchart_meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [String(POSTGRES_SCHEMA_VERSION)],
      );
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
