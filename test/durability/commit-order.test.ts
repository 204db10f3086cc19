import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { AgentEvent, Message } from 'agentchart';
import { checkInvariants } from 'agentchart/testing';
import { startPostgres } from '../support/postgres.js';
import { bundleChild, inPool, lastJson, lines, spawnChild, until } from '../support/processes.js';
import type { CommitOrderConfig, CommitOrderReport } from './commit-order-child.js';

/**
 * What is committed before what, checked by killing the process: a turn's tool results are stored
 * before its post-turn policies run (a policy that blocks the process cannot lose them), and every
 * event a subscriber received is in the store under the same seq, so a client that resumes with
 * `afterSeq` after a crash neither misses nor sees twice an event.
 */

const CHILD = await bundleChild(new URL('./commit-order-child.ts', import.meta.url));
const started = await startPostgres();
const server = 'server' in started ? started.server : null;
if (!server) console.log(`postgres commit-order tests skipped: ${'skipped' in started ? started.skipped : ''}`);
afterAll(() => {
  server?.stop();
  rmSync(fileURLToPath(CHILD), { force: true });
});

let databases = 0;
async function store(kind: 'sqlite' | 'postgres'): Promise<CommitOrderConfig['store']> {
  if (kind === 'sqlite') return { kind, path: join(mkdtempSync(join(tmpdir(), 'agentchart-order-')), 's.db') };
  const admin = new pg.Client({ connectionString: server?.connectionString });
  await admin.connect();
  const name = `order_${process.pid}_${databases++}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return { kind, connectionString: (server?.connectionString ?? '').replace(/\/postgres$/, `/${name}`) };
}

async function killedThenResumed(kind: 'sqlite' | 'postgres', kill: CommitOrderConfig['kill'], live = false) {
  const journal = join(mkdtempSync(join(tmpdir(), 'agentchart-order-journal-')), 'journal.txt');
  const config = { store: await store(kind), kill, journal, live };
  const first = spawnChild(CHILD, 'AGENTCHART_COMMIT_ORDER', { ...config, mode: 'start' });
  if (kill.in === 'postTurnPolicy') {
    // The policy blocks the process: it is killed from outside while inside it.
    await until(() => lines(journal).includes('policy'), 'the post-turn policy to start');
    first.child.kill('SIGKILL');
  }
  const killed = await first.exited;
  expect(killed.signal, killed.stderr).toBe('SIGKILL');
  const resumed = await spawnChild(CHILD, 'AGENTCHART_COMMIT_ORDER', { ...config, mode: 'resume' }).exited;
  expect(resumed.code, resumed.stderr).toBe(0);
  const report = lastJson<CommitOrderReport>(resumed.stdout);
  const seen = lines(journal)
    .filter((line) => line.startsWith('seen '))
    .map((line) => JSON.parse(line.slice(5)) as AgentEvent);
  return { report, journal: lines(journal), seen, history: report.history as Message[] };
}

const backends = [
  ['SQLite', 'sqlite', true],
  ['PostgreSQL', 'postgres', server !== null],
] as const;

describe.each(backends)('commit order on %s', (_name, kind, available) => {
  it.skipIf(!available)(
    "a process killed inside a post-turn policy: the turn's finished 'never' tool keeps its real result",
    async () => {
      const { report, journal, history } = await killedThenResumed(kind, { in: 'postTurnPolicy' });
      expect(report.status).toBe('completed');
      expect(journal.filter((line) => line === 'never a')).toHaveLength(1);
      expect(history.find((m) => m.role === 'toolResult' && m.toolCallId === 'a')).toMatchObject({
        content: 'wrote a',
        isError: false,
      });
      expect(checkInvariants(report.events, history).violations).toEqual([]);
    },
    60_000,
  );

  it.skipIf(!available)(
    'a subscriber killed as it receives an event: everything it saw is stored under the same seq; resuming after its last seq completes the log',
    async () => {
      const points: Array<[AgentEvent['type'], number]> = [
        ['beforeModelCall', 1],
        ['messageEnd', 1],
        ['toolExecutionStart', 1],
        ['toolExecutionEnd', 1],
        ['turnEnd', 1],
        ['turnStart', 2],
        ['toolExecutionEnd', 2],
      ];
      const outcomes = await inPool(points, 2, ([on, nth]) => killedThenResumed(kind, { in: 'subscriber', on, nth }));
      for (const [index, { report, seen, history }] of outcomes.entries()) {
        const [on, nth] = points[index] as [string, number];
        const where = `killed as the subscriber received ${on} #${nth}`;
        expect(
          seen.filter((event) => event.type === on),
          where,
        ).toHaveLength(nth);
        expect(report.status, where).toBe('completed');
        const stored = new Map(report.events.map((event) => [event.seq, event]));
        // Stored before it was published: the same event under the same seq.
        for (const event of seen) expect(JSON.parse(JSON.stringify(stored.get(event.seq))), where).toEqual(event);
        // A client resuming after the last seq it saw gets a whole log: nothing missed, nothing twice.
        const lastSeen = seen.at(-1)?.seq ?? -1;
        const resumedView = [...seen, ...report.events.filter((event) => event.seq > lastSeen)];
        expect(checkInvariants(resumedView, history).violations, where).toEqual([]);
        expect(checkInvariants(report.events, history).violations, where).toEqual([]);
      }
    },
    120_000,
  );

  it.skipIf(!available)(
    'ephemeral events (live deltas, progress updates) seen before a crash: their seqs are never reused by the resumed run',
    async () => {
      const points: Array<[AgentEvent['type'], number]> = [
        ['messageUpdate', 2],
        ['toolExecutionUpdate', 2],
      ];
      const outcomes = await inPool(points, 2, ([on, nth]) =>
        killedThenResumed(kind, { in: 'subscriber', on, nth }, true),
      );
      for (const [index, { report, seen, history }] of outcomes.entries()) {
        const where = `killed as the subscriber received ${points[index]?.join(' #')} (live streaming)`;
        expect(report.status, where).toBe('completed');
        const seenSeqs = new Set(seen.map((event) => event.seq));
        const lastSeen = Math.max(...seenSeqs);
        for (const event of report.events) {
          // A stored seq the subscriber saw is the event it saw; every other stored seq is past all it saw.
          if (seenSeqs.has(event.seq))
            expect(JSON.parse(JSON.stringify(event)), where).toEqual(seen.find((e) => e.seq === event.seq));
          else expect(event.seq, `${where}: ${event.type} seq ${event.seq}`).toBeGreaterThan(lastSeen);
        }
        // What it saw and did not find stored is ephemeral only.
        const stored = new Set(report.events.map((event) => event.seq));
        const lost = seen.filter((event) => !stored.has(event.seq)).map((event) => event.type);
        expect(
          lost.every((type) => ['messageStart', 'messageUpdate', 'toolExecutionUpdate'].includes(type)),
          `${where}: ${lost.join(', ')}`,
        ).toBe(true);
        expect(checkInvariants(report.events, history).violations, where).toEqual([]);
      }
    },
    120_000,
  );
});
