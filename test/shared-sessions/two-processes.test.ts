import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { INTERRUPTED_BY_RESTART, type Message } from 'agentchart';
import { checkInvariants } from 'agentchart/testing';
import { startPostgres } from '../support/postgres.js';
import { lastJson, lines, spawnChild, until } from '../support/processes.js';
import { reportStats } from '../support/stats.js';
import type { ChildReport, SharedChildConfig } from './child.js';

/**
 * Two processes on one session, on one SQLite file and on one Postgres database: the second is
 * refused while the first runs; after kill -9 it takes over at once (same host), or after the ttl
 * when the dead owner's lease names another host; a paused owner that wakes up fenced never starts
 * another tool.
 */

const TTL_MS = 1_000;
const CHILD = new URL('./child.ts', import.meta.url);

const started = await startPostgres();
const server = 'server' in started ? started.server : null;
if (!server) console.log(`postgres shared-session tests skipped: ${'skipped' in started ? started.skipped : ''}`);
afterAll(() => server?.stop());

let databases = 0;
async function postgresDatabase(): Promise<SharedChildConfig['store']> {
  const admin = new pg.Client({ connectionString: server?.connectionString });
  await admin.connect();
  const name = `shared_${process.pid}_${databases++}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return { kind: 'postgres', connectionString: (server?.connectionString ?? '').replace(/\/postgres$/, `/${name}`) };
}

const backends: Array<[string, () => Promise<SharedChildConfig['store']>, boolean]> = [
  [
    'one SQLite file',
    async () => ({ kind: 'sqlite', path: join(mkdtempSync(join(tmpdir(), 'agentchart-shared-')), 'sessions.db') }),
    true,
  ],
  ['one Postgres database', postgresDatabase, server !== null],
];

function session(store: SharedChildConfig['store'], holdMs: number, ttlMs = TTL_MS, host?: string) {
  const journal = join(mkdtempSync(join(tmpdir(), 'agentchart-journal-')), 'journal.txt');
  const config = (mode: SharedChildConfig['mode']): SharedChildConfig => ({
    store,
    sessionId: 'shared',
    mode,
    journal,
    ttlMs,
    holdMs,
    ...(host ? { host } : {}),
  });
  return { journal, run: (mode: SharedChildConfig['mode']) => spawnChild(CHILD, 'AGENTCHART_SHARED', config(mode)) };
}

const byPid = (journal: string, pid: number | undefined) =>
  lines(journal)
    .filter((line) => line.endsWith(` ${pid}`))
    .map((line) => line.replace(/ \d+$/, ''));

/** When the session's lease expires, as stored. */
async function leaseExpiry(store: SharedChildConfig['store']): Promise<number> {
  const sql = "SELECT expires_at FROM %s WHERE session_id = 'shared'";
  if (store.kind === 'sqlite') {
    const db = new DatabaseSync(store.path, { readOnly: true });
    const row = db.prepare(sql.replace('%s', 'leases')).get() as { expires_at: number };
    db.close();
    return Number(row.expires_at);
  }
  const client = new pg.Client({ connectionString: store.connectionString });
  await client.connect();
  const { rows } = await client.query(sql.replace('%s', 'agentchart_leases'));
  await client.end();
  return Number((rows[0] as { expires_at: string }).expires_at);
}

/** The resumer finished the session: parity, one run, the 'never' step not run again, steering delivered once. */
function expectFinishedAfterTakeover(report: ChildReport, journal: string, pid: number | undefined): void {
  const history = report.history as Message[];
  expect(report.result).toEqual({ status: 'completed', endReason: 'naturalEnd' });
  expect(checkInvariants(report.events ?? [], history).violations).toEqual([]);
  expect(new Set(report.events?.map((e) => e.runId)).size).toBe(1);
  // The 'never' step the owner was running is not run again: its result says so.
  expect(lines(journal).filter((line) => line.startsWith('start n1'))).toHaveLength(1);
  expect(history.find((m) => m.role === 'toolResult' && m.toolCallId === 'n1')).toMatchObject({
    content: INTERRUPTED_BY_RESTART,
    isError: true,
  });
  expect(byPid(journal, pid)).toEqual(['start n2', 'end n2']);
  // The steering the owner accepted is delivered exactly once.
  expect(history.filter((m) => m.role === 'user' && m.content === 'Also note the time.')).toHaveLength(1);
}

describe.each(backends)('two processes on %s', (name, makeStore, available) => {
  it.skipIf(!available)(
    'the second gets SessionBusy while the first runs; after kill -9 it takes over at once (same host) and finishes with parity',
    async () => {
      // A 30 s lease: only the dead-owner check can let the restarted process in at once.
      const { journal, run } = session(await makeStore(), 60_000, 30_000);
      const owner = run('owner');
      await until(
        () => byPid(journal, owner.child.pid).includes('start n1') && byPid(journal, owner.child.pid).includes('steer'),
        'the owner to start step n1 and accept the steering',
      );

      const contender = await run('contender').exited;
      const refused = lastJson<ChildReport>(contender.stdout);
      expect(refused.busy?.code, contender.stderr).toBe('SessionBusy');
      expect(refused.busy?.message).toMatch(
        new RegExp(`owner "owner-${owner.child.pid}" holds its lease until \\d{4}-[\\d-]+T[\\d:.]+Z`),
      );

      owner.child.kill('SIGKILL');
      expect((await owner.exited).signal).toBe('SIGKILL');
      const resuming = run('resumer');
      const resumer = await resuming.exited;
      expect(resumer.code, resumer.stderr).toBe(0);
      const report = lastJson<ChildReport>(resumer.stdout);
      expect(report.refusals).toBe(0);
      reportStats(`${name}: restarted process took the session over in ${report.takeoverMs?.toFixed(0)} ms`);
      expectFinishedAfterTakeover(report, journal, resuming.child.pid);
    },
    60_000,
  );

  it.skipIf(!available)(
    "a dead owner's lease that names another host waits for its ttl, then the session is taken over",
    async () => {
      const store = await makeStore();
      const { journal, run } = session(store, 60_000, 4_000, 'another-host');
      const owner = run('owner');
      await until(
        () => byPid(journal, owner.child.pid).includes('start n1') && byPid(journal, owner.child.pid).includes('steer'),
        'the owner to start step n1 and accept the steering',
      );
      owner.child.kill('SIGKILL');
      await owner.exited;
      const expiry = await leaseExpiry(store);
      const resuming = run('resumer');
      const resumer = await resuming.exited;
      expect(resumer.code, resumer.stderr).toBe(0);
      const report = lastJson<ChildReport>(resumer.stdout);
      // Its pid means nothing on this host: not taken over before the lease expired.
      expect(report.takenOverAt).toBeGreaterThanOrEqual(expiry);
      reportStats(
        `${name}: another host's lease: refused ${report.refusals} times, taken over after ${report.takeoverMs?.toFixed(0)} ms`,
      );
      expectFinishedAfterTakeover(report, journal, resuming.child.pid);
    },
    60_000,
  );

  it.skipIf(!available)(
    'a fenced owner (paused past its ttl while another took over) stops at its next step and never starts another tool',
    async () => {
      const { journal, run } = session(await makeStore(), 1_500);
      const owner = run('owner');
      await until(() => byPid(journal, owner.child.pid).includes('start n1'), 'the owner to start step n1');
      // A long pause (a stopped VM, a debugger): no renewal reaches the store.
      owner.child.kill('SIGSTOP');
      const resumer = await run('resumer').exited;
      expect(resumer.code, resumer.stderr).toBe(0);
      const taken = lastJson<ChildReport>(resumer.stdout);
      expect(taken.result?.status).toBe('completed');
      expect(checkInvariants(taken.events ?? [], taken.history as Message[]).violations).toEqual([]);

      owner.child.kill('SIGCONT');
      const woke = await owner.exited;
      expect(woke.code, woke.stderr).toBe(0);
      expect(lastJson<ChildReport>(woke.stdout).result).toMatchObject({
        status: 'failed',
        endReason: 'fatalError',
        error: { code: 'sessionLost' },
      });
      // The owner finished the step it was in, and started nothing after it.
      expect(byPid(journal, owner.child.pid).filter((line) => line.startsWith('start'))).toEqual(['start n1']);
      expect(lines(journal).filter((line) => line.startsWith('start n2'))).toHaveLength(1);
    },
    60_000,
  );
});
