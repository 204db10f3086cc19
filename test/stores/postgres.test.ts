import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { AgentError, createAgent } from 'agentchart';
import { postgresStore, POSTGRES_SCHEMA_VERSION, type PostgresStore } from 'agentchart/postgres';
import { scriptedModel } from 'agentchart/testing';
import { startPostgres, type PostgresServer } from '../support/postgres.js';
import { storeConformance } from './conformance.js';
import { stepRecordsConformance } from './steps-conformance.js';

const started = await startPostgres();
const server: PostgresServer | null = 'server' in started ? started.server : null;
if (!server) console.log(`postgres tests skipped: ${'skipped' in started ? started.skipped : ''}`);
afterAll(() => server?.stop());

let database = 0;
/** A fresh database per case, so every case starts from an empty schema. */
async function freshDatabase(): Promise<string> {
  const admin = new pg.Client({ connectionString: server?.connectionString });
  await admin.connect();
  const name = `conformance_${process.pid}_${database++}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return (server?.connectionString ?? '').replace(/\/postgres$/, `/${name}`);
}

describe.skipIf(!server)('postgresStore step records', () => stepRecordsConformance(postgresUnderTest));

describe.skipIf(!server)('postgresStore conformance', () => {
  storeConformance(async (now) => {
    const connectionString = await freshDatabase();
    const handles: PostgresStore[] = [postgresStore({ connectionString, now })];
    const reopen = () => {
      const handle = postgresStore({ connectionString, now });
      handles.push(handle);
      return handle;
    };
    return {
      store: handles[0] as PostgresStore,
      reopen,
      close: async () => void (await Promise.all(handles.map((h) => h.close()))),
    };
  });
});

describe.skipIf(!server)('postgresStore', () => {
  let connectionString = '';
  beforeAll(async () => {
    connectionString = await freshDatabase();
  });

  it('creates its tables on first use, once, with the layout version recorded; many first uses at once agree', async () => {
    const stores = Array.from({ length: 6 }, () => postgresStore({ connectionString }));
    await Promise.all(stores.map((store) => store.list()));
    const client = new pg.Client({ connectionString });
    await client.connect();
    const meta = await client.query("SELECT value FROM agentchart_meta WHERE key = 'schema_version'");
    expect(meta.rows).toEqual([{ value: String(POSTGRES_SCHEMA_VERSION) }]);
    // A database written by a newer version is refused, not misread.
    await client.query("UPDATE agentchart_meta SET value = '99' WHERE key = 'schema_version'");
    const newer = postgresStore({ connectionString });
    await expect(newer.load('s')).rejects.toMatchObject({
      code: 'StoreUnavailable',
      message: expect.stringContaining('layout 99'),
    });
    await client.query("UPDATE agentchart_meta SET value = $1 WHERE key = 'schema_version'", [
      String(POSTGRES_SCHEMA_VERSION),
    ]);
    await client.end();
    await Promise.all([...stores, newer].map((store) => store.close()));
  });

  it('takes a pool you own (and leaves it open); runs a durable agent session', async () => {
    const pool = new pg.Pool({ connectionString });
    try {
      const store = postgresStore({ pool });
      const agent = createAgent({
        model: scriptedModel([{ text: 'Stored in Postgres.' }]),
        store,
        sessionId: 'pool-session',
      });
      await agent.ready;
      expect((await agent.prompt('hello').result).status).toBe('completed');
      await agent.close();
      const stored = await store.loadEvents('pool-session');
      await store.close();
      expect(stored.at(-1)?.type).toBe('agentEnd');
      expect((await pool.query('SELECT count(*)::int AS n FROM agentchart_events')).rows[0]).toEqual({
        n: stored.length,
      });
    } finally {
      await pool.end();
    }
  });

  it('an unreachable server is StoreUnavailable; a missing option is InvalidOptions', async () => {
    const store = postgresStore({ connectionString: 'postgres://postgres@127.0.0.1:1/none' });
    await expect(store.load('s')).rejects.toMatchObject({
      name: 'AgentError',
      code: 'StoreUnavailable',
      message: expect.stringMatching(/^postgres store: /),
    });
    const agent = createAgent({ model: scriptedModel([]), store, sessionId: 's' });
    await expect(agent.ready).rejects.toBeInstanceOf(AgentError);
    expect(() => postgresStore({} as never)).toThrow(expect.objectContaining({ code: 'InvalidOptions' }));
    await store.close();
  });
});

async function postgresUnderTest(now: () => number) {
  const connectionString = await freshDatabase();
  const handles: PostgresStore[] = [postgresStore({ connectionString, now })];
  const reopen = () => {
    const handle = postgresStore({ connectionString, now });
    handles.push(handle);
    return handle;
  };
  return {
    store: handles[0] as PostgresStore,
    reopen,
    close: async () => void (await Promise.all(handles.map((h) => h.close()))),
  };
}
