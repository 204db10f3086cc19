import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import {
  createAgent,
  memoryStore,
  type AgentEvent,
  type AgentOptions,
  type Message,
  type Model,
  type RunResult,
  type SessionStore,
} from 'agentchart';
import { postgresStore } from 'agentchart/postgres';
import { sqliteStore } from 'agentchart/sqlite';
import { checkInvariants } from 'agentchart/testing';
import { startPostgres } from '../support/postgres.js';

/**
 * The same case with no store and on every store (memory, a SQLite file, a PostgreSQL the test
 * starts): a value JSON cannot hold is handled the same way with or without a store.
 */

const started = await startPostgres();
const postgres = 'server' in started ? started.server : null;
if (!postgres) console.log(`postgres cases skipped: ${'skipped' in started ? started.skipped : ''}`);
afterAll(() => postgres?.stop());

interface Setup {
  store: SessionStore | null;
  close(): Promise<void>;
}

export const setups: Array<[string, () => Promise<Setup>]> = [
  ['no store', async () => ({ store: null, close: async () => {} })],
  ['memoryStore', async () => ({ store: memoryStore(), close: async () => {} })],
  [
    'sqliteStore (a file)',
    async () => {
      const store = sqliteStore(join(mkdtempSync(join(tmpdir(), 'agentchart-json-')), 's.db'));
      return { store, close: async () => store.close() };
    },
  ],
];
if (postgres) {
  setups.push([
    'postgresStore',
    async () => {
      const store = postgresStore({ connectionString: postgres.connectionString });
      return { store, close: () => store.close() };
    },
  ]);
}

/** Cases share the PostgreSQL database: each session is new. */
let sessions = 0;

export interface Ran {
  result: RunResult;
  /** What a subscriber saw live. */
  events: AgentEvent[];
  /** What a subscriber joining after the run sees (the replay buffer). */
  late: AgentEvent[];
  /** What the store holds (null without a store). */
  stored: AgentEvent[] | null;
}

/**
 * Runs one prompt on a new session of the setup, checks the event-log invariants, and hands back
 * what subscribers and the store saw; `after` runs with the store before it is closed.
 */
export async function runOn(
  setup: () => Promise<Setup>,
  model: Model,
  options: Omit<AgentOptions, 'model'>,
  after?: (store: SessionStore, sessionId: string, ran: Ran) => Promise<void>,
): Promise<Ran> {
  const { store, close } = await setup();
  const sessionId = `json-${process.pid}-${sessions++}`;
  const agent = createAgent({ model, ...options, ...(store ? { store, sessionId } : {}) });
  await agent.ready;
  const run = agent.prompt('go');
  const events: AgentEvent[] = [];
  run.events.subscribe((event) => events.push(event));
  const result = await run.result;
  const late: AgentEvent[] = [];
  run.events.subscribe((event) => late.push(event));
  expect(checkInvariants(events, result.messages)).toEqual({ ok: true, violations: [] });
  const stored = store ? await store.loadEvents(sessionId) : null;
  await agent.close();
  const ran = { result, events, late, stored };
  if (store && after) await after(store, sessionId, ran);
  await close();
  return ran;
}

export const updatesOf = (events: readonly AgentEvent[]) =>
  events
    .filter((event) => event.type === 'toolExecutionUpdate')
    .map((event) => [event.toolCallId, event.partial] as const);

export const resultsOf = (messages: readonly Message[]) =>
  messages.flatMap((message) => (message.role === 'toolResult' ? [message.content] : []));
