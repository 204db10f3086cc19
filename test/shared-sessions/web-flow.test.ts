import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { SessionStore } from 'agentchart';
import { postgresStore } from 'agentchart/postgres';
import { sqliteStore } from 'agentchart/sqlite';
import { checkInvariants } from 'agentchart/testing';
import { startPostgres } from '../support/postgres.js';
import { bundleChild, lines, spawnChild, withReports, until, type Spawned } from '../support/processes.js';
import type { WebFlowConfig, WebFlowReport } from './web-flow-child.js';

/**
 * The web flow across two processes: request 1's handle prompts and its run parks at a durable
 * approval (its process stays up); request 2's handle, in another process, lists the approval and
 * answers it. The tool runs once, the run goes on in process 2 and its subscriber gets the events
 * to the end; process 1's handle is told its run moved on. A denial and a stale version the same way.
 * On one SQLite file and on one Postgres database.
 */

const CHILD = await bundleChild(new URL('./web-flow-child.ts', import.meta.url));
const started = await startPostgres();
const server = 'server' in started ? started.server : null;
if (!server) console.log(`postgres web-flow tests skipped: ${'skipped' in started ? started.skipped : ''}`);
afterAll(() => {
  rmSync(fileURLToPath(CHILD), { force: true });
  server?.stop();
});

let databases = 0;
async function postgresDatabase(): Promise<string> {
  const admin = new pg.Client({ connectionString: server?.connectionString });
  await admin.connect();
  const name = `web_flow_${process.pid}_${databases++}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return (server?.connectionString ?? '').replace(/\/postgres$/, `/${name}`);
}

type Backend = 'sqlite' | 'postgres';

async function flow(backend: Backend) {
  const dir = mkdtempSync(join(tmpdir(), 'agentchart-web-flow-'));
  const postgres = backend === 'postgres' ? await postgresDatabase() : undefined;
  const base = { db: join(dir, 'sessions.db'), journal: join(dir, 'journal.txt'), ...(postgres ? { postgres } : {}) };
  const spawn = (
    config: Omit<WebFlowConfig, 'db' | 'journal' | 'postgres'>,
  ): Spawned & { reports(): WebFlowReport[] } => {
    return withReports<WebFlowReport>(spawnChild(CHILD, 'AGENTCHART_WEB_FLOW', { ...base, ...config }));
  };
  return { ...base, spawn };
}

type Flow = Awaited<ReturnType<typeof flow>>;

/** Process 1: its run parked at the approval, the process still up. */
async function parkedStarter(web: Flow) {
  const starter = web.spawn({ role: 'starter' });
  await until(() => starter.reports().some((r) => r.parked), 'the starter to park at the approval');
  const parked = starter.reports().find((r) => r.parked)?.parked ?? [];
  expect(parked).toEqual([
    { toolCallId: 'd1', toolName: 'deploy', arguments: { target: 'prod' }, version: expect.any(Number) },
  ]);
  return { starter, parked };
}

async function answered(web: Flow, answer: NonNullable<WebFlowConfig['answer']>) {
  const approver = web.spawn({ role: 'approver', answer });
  const exit = await approver.exited;
  expect(exit.code, exit.stderr).toBe(0);
  return approver.reports().at(-1) as WebFlowReport;
}

async function storedLog(web: Flow) {
  const store: SessionStore & { close(): unknown } = web.postgres
    ? postgresStore({ connectionString: web.postgres })
    : sqliteStore(web.db);
  const checkpoint = await store.load('web');
  const events = await store.loadEvents('web');
  await store.close();
  return { checkpoint, events, history: checkpoint?.history ?? [] };
}

const backends: Array<[string, Backend, boolean]> = [
  ['one SQLite file', 'sqlite', true],
  ['one Postgres database', 'postgres', server !== null],
];

describe.each(backends)('the web flow across two processes on %s', (_name, backend, available) => {
  it.skipIf(!available)(
    "approve from process 2 while process 1 lives: the tool runs once, process 2's subscriber gets the rest, process 1 is told its run moved on",
    async () => {
      const web = await flow(backend);
      const { starter, parked } = await parkedStarter(web);
      const approver = await answered(web, { approved: true });
      expect(approver.pending).toEqual(parked);
      expect(approver.result).toEqual({ status: 'completed', endReason: 'naturalEnd' });
      expect(approver.events?.[0]).toBe('toolApprovalResolved');
      expect(approver.events).toEqual(expect.arrayContaining(['toolExecutionStart', 'toolExecutionEnd', 'turnEnd']));
      expect(approver.events?.at(-1)).toBe('agentEnd');
      const first = await starter.exited;
      expect(first.code, first.stderr).toBe(0);
      expect(starter.reports().at(-1)).toMatchObject({
        role: 'starter',
        result: { status: 'movedOn', endReason: 'movedOn' },
      });
      // The tool ran once, in process 2.
      expect(lines(web.journal)).toEqual([`deploy prod ${approver.pid}`]);
      const { events, history } = await storedLog(web);
      expect(checkInvariants(events, history).violations).toEqual([]);
      expect(new Set(events.map((event) => event.runId))).toEqual(new Set([approver.runId]));
      expect(events.at(-1)).toMatchObject({ type: 'agentEnd', status: 'completed' });
      expect(history.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'Prod is live.' }] });
    },
    60_000,
  );

  it.skipIf(!available)(
    'deny from process 2: the tool never runs, the run answers without it, process 1 moved on',
    async () => {
      const web = await flow(backend);
      const { starter } = await parkedStarter(web);
      const approver = await answered(web, { approved: false });
      expect(approver.result).toEqual({ status: 'completed', endReason: 'naturalEnd' });
      expect(lines(web.journal)).toEqual([]);
      expect((await starter.exited).code).toBe(0);
      expect(starter.reports().at(-1)?.result?.status).toBe('movedOn');
      const { events, history } = await storedLog(web);
      expect(checkInvariants(events, history).violations).toEqual([]);
      expect(history.find((m) => m.role === 'toolResult')).toMatchObject({
        content: 'rejected: not today',
        isError: true,
      });
    },
    60_000,
  );

  it.skipIf(!available)(
    'a stale version from process 2: StaleVersion, nothing runs, process 1 stays parked; the right version then continues it',
    async () => {
      const web = await flow(backend);
      const { starter } = await parkedStarter(web);
      const stale = await answered(web, { approved: true, versionOffset: -1 });
      expect(stale.refused).toMatchObject({ code: 'StaleVersion' });
      expect(lines(web.journal)).toEqual([]);
      // Nothing moved the run on: process 1 still waits.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(starter.child.exitCode).toBeNull();
      expect(starter.reports().some((r) => r.result)).toBe(false);
      const approver = await answered(web, { approved: true });
      expect(approver.result?.status).toBe('completed');
      expect((await starter.exited).code).toBe(0);
      expect(starter.reports().at(-1)?.result?.status).toBe('movedOn');
      expect(lines(web.journal)).toHaveLength(1);
    },
    60_000,
  );
});
