import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createAgent, INTERRUPTED_BY_RESTART, toolCallsOf } from 'agentchart';
import { postgresStore } from 'agentchart/postgres';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { startPostgres } from '../support/postgres.js';
import { bundleChild, lines, spawnChild, type Spawned } from '../support/processes.js';
import type { WorkerConfig } from './worker.js';

/**
 * 8 worker processes share 200 sessions on one Postgres database; workers are killed (SIGKILL) and
 * restarted at random while they work. Every session finishes with parity, no session runs in two
 * processes at once, and no 'never' step runs twice.
 */

const WORKERS = 8;
const SESSIONS = 200;
const TTL_MS = 1_000;

const started = await startPostgres();
const server = 'server' in started ? started.server : null;
if (!server) console.log(`postgres workers test skipped: ${'skipped' in started ? started.skipped : ''}`);
afterAll(() => server?.stop());

/** A small seeded generator, so a failing run can be told apart and replayed in spirit (the seed is printed). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe.skipIf(!server)('8 workers share 200 sessions on Postgres', () => {
  it('workers killed and restarted at random: all 200 finish with parity, none runs twice at once, no step twice', async () => {
    const admin = new pg.Client({ connectionString: server?.connectionString });
    await admin.connect();
    await admin.query('CREATE DATABASE workers');
    await admin.end();
    const connectionString = (server?.connectionString ?? '').replace(/\/postgres$/, '/workers');
    const dir = mkdtempSync(join(tmpdir(), 'agentchart-workers-'));
    const config: WorkerConfig = { connectionString, sessions: SESSIONS, dir, ttlMs: TTL_MS };
    // Each session's job waits as a queued follow-up: a worker's continue() starts it exactly once.
    const seeding = postgresStore({ connectionString });
    for (let i = 0; i < SESSIONS; i++) {
      const seeder = createAgent({ model: scriptedModel([]), store: seeding, sessionId: `job-${i}` });
      await seeder.ready;
      expect(await seeder.followUp(`Run job job-${i}.`)).toEqual({ status: 'stillQueued' });
    }
    await seeding.close();
    const seed = Date.now() % 100_000;
    const next = random(seed);
    console.log(`workers test: seed ${seed}, journal ${dir}`);

    const worker = await bundleChild(new URL('./worker.ts', import.meta.url));
    const spawnWorker = () => spawnChild(worker, 'AGENTCHART_WORKER', config, 180_000);
    const workers: Spawned[] = Array.from({ length: WORKERS }, spawnWorker);
    const working = (w: Spawned) =>
      w.child.exitCode === null &&
      w.child.signalCode === null &&
      lines(join(dir, 'journal.txt')).some((line) => line.endsWith(` ${w.child.pid}`));
    let kills = 0;
    let chaos = true;
    const killer = (async () => {
      while (chaos && kills < 20) {
        await new Promise((resolve) => setTimeout(resolve, 150 + next() * 450));
        // A worker that has started working (a kill then lands mid-session, between or inside steps).
        const candidates = workers.map((w, i) => [w, i] as const).filter(([w]) => working(w));
        if (!chaos || candidates.length === 0) continue;
        const [victim, index] = candidates[Math.floor(next() * candidates.length)] as readonly [Spawned, number];
        victim.child.kill('SIGKILL');
        await victim.exited;
        kills++;
        workers[index] = spawnWorker();
      }
    })();
    // Workers exit 0 once every session is finished; the killer stops then.
    const exits: Array<{ code: number | null; stderr: string }> = [];
    for (;;) {
      const current = [...workers];
      const done = await Promise.all(current.map((w) => w.exited));
      if (current.every((w, i) => workers[i] === w)) {
        exits.push(...done);
        break;
      }
    }
    chaos = false;
    await killer;
    for (const exit of exits) expect(exit.code, exit.stderr).toBe(0);

    const store = postgresStore({ connectionString });
    const summaries = await store.list();
    expect(summaries).toHaveLength(SESSIONS);
    expect(summaries.filter((s) => s.running)).toEqual([]);
    const journal = lines(join(dir, 'journal.txt'));
    let interrupted = 0;
    for (let i = 0; i < SESSIONS; i++) {
      const session = `job-${i}`;
      const checkpoint = await store.load(session);
      const events = await store.loadEvents(session);
      const history = checkpoint?.history ?? [];
      expect(checkInvariants(events, history).violations, session).toEqual([]);
      expect(history.at(-1), session).toMatchObject({
        role: 'assistant',
        content: [{ type: 'text', text: `Job ${session} done.` }],
      });
      for (const message of history) {
        if (message.role !== 'assistant') continue;
        for (const call of toolCallsOf(message)) {
          const results = history.filter((m) => m.role === 'toolResult' && m.toolCallId === call.id);
          expect(results, `${session} ${call.id}`).toHaveLength(1);
          if (results[0]?.role === 'toolResult' && results[0].content === INTERRUPTED_BY_RESTART) interrupted++;
        }
      }
    }
    await store.close();
    rmSync(fileURLToPath(worker), { force: true });
    // No session ran in two live processes at once; no 'never' step ran twice.
    expect(journal.filter((line) => line.startsWith('overlap'))).toEqual([]);
    const starts = journal
      .filter((line) => line.startsWith('start'))
      .map((line) => line.split(' ').slice(1, 3).join(' '));
    expect(starts.length).toBe(new Set(starts).size);
    const resumed = journal.filter((line) => line.startsWith('resume')).length;
    console.log(
      `workers test: ${kills} kills, ${resumed} sessions resumed, ${interrupted} steps interrupted by a kill, ${starts.length} steps run`,
    );
    expect(kills).toBeGreaterThan(0);
  }, 240_000);
});
