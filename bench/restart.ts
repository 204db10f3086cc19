import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { startPostgres } from '../test/support/postgres.js';
import { loadAverage, median } from './stats.js';

/**
 * `npm run build && tsx bench/restart.ts [rounds]`: how soon a program killed with SIGKILL in the middle
 * of a run is running it again once started anew, on SQLite and on PostgreSQL (a server this script
 * starts, where the machine has one). A process of the built package runs a session into a tool that
 * never returns; the script kills it and at once starts the same program again, which finds the run in
 * `ready` (the dead owner ran on this host: its 30 s lease is taken over on the spot). Measured: from
 * that spawn to `ready` resolved with the resumed run (Node's start and the package's import included),
 * and the part of it from `createAgent` to `ready`. Runs alone (not part of `npm run bench`).
 */

const ROOT = resolve(import.meta.dirname, '..');

/** The program, started twice: `start` runs into the tool and hangs there; `resume` finishes the run. */
const PROGRAM = `
  const [root, kind, target, sessionId, mode] = process.argv.slice(1);
  const at = (path) => new URL(path, root).href;
  const { createAgent, defineTool } = await import(at('dist/src/index.js'));
  const { scriptedModel } = await import(at('dist/src/testing.js'));
  const { z } = await import('zod');
  const store = kind === 'sqlite'
    ? (await import(at('dist/src/sqlite.js'))).sqliteStore(target)
    : (await import(at('dist/src/postgres.js'))).postgresStore({ connectionString: target });
  const work = defineTool({
    name: 'work', description: 'Works (never returns in the first process).', parameters: z.object({}),
    execute: async () => {
      process.stdout.write('in-tool\\n');
      setInterval(() => {}, 60_000);
      return new Promise(() => {});
    },
  });
  const model = scriptedModel(
    (request) => request.messages.at(-1)?.role === 'toolResult'
      ? { text: 'done' }
      : { toolCalls: [{ id: 'w1', name: 'work', arguments: {} }] },
    { recordRequests: false },
  );
  const began = performance.now();
  const agent = createAgent({ model, tools: [work], store, sessionId });
  const { resumedRun } = await agent.ready;
  const readyAt = Date.now();
  const agentToReadyMs = performance.now() - began;
  if (mode === 'start') {
    await agent.prompt('Work.').result;
  } else {
    if (!resumedRun) throw new Error('nothing was resumed');
    const result = await resumedRun.result;
    await agent.close();
    await store.close();
    console.log(JSON.stringify({ readyAt, agentToReadyMs, status: result.status }));
  }
`;

interface Restart {
  restartToReadyMs: number;
  agentToReadyMs: number;
}

function start(kind: string, target: string, sessionId: string, mode: 'start' | 'resume') {
  const root = `${pathToFileURL(ROOT).href}/`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', PROGRAM, root, kind, target, sessionId, mode], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<{ code: number | null; out: string; err: string }>((done) =>
    child.once('exit', (code) => done({ code, out, err })),
  );
  return { child, exited, output: () => out };
}

async function restartOnce(kind: string, target: string, sessionId: string): Promise<Restart> {
  const first = start(kind, target, sessionId, 'start');
  for (let i = 0; i < 3_000 && !first.output().includes('in-tool'); i++) {
    if (first.child.exitCode !== null) throw new Error(`the first process exited: ${(await first.exited).err}`);
    await new Promise((done) => setTimeout(done, 5));
  }
  first.child.kill('SIGKILL');
  await first.exited;
  const spawnedAt = Date.now();
  const second = await start(kind, target, sessionId, 'resume').exited;
  if (second.code !== 0) throw new Error(`the restarted process failed: ${second.err}`);
  const report = JSON.parse(second.out.trim().split('\n').at(-1) ?? '{}') as {
    readyAt: number;
    agentToReadyMs: number;
  };
  return { restartToReadyMs: report.readyAt - spawnedAt, agentToReadyMs: report.agentToReadyMs };
}

async function measure(kind: string, target: string, rounds: number) {
  const samples: Restart[] = [];
  // One warm-up round (the OS's file cache, the server's first connection).
  for (let round = -1; round < rounds; round++) {
    const sample = await restartOnce(kind, target, `restart-${kind}-${round + 1}`);
    if (round >= 0) samples.push(sample);
  }
  const ms = (values: number[]) => Math.round(median(values));
  return {
    store: kind,
    rounds,
    restartToReadyMs: ms(samples.map((s) => s.restartToReadyMs)),
    restartToReadyMaxMs: Math.round(Math.max(...samples.map((s) => s.restartToReadyMs))),
    agentToReadyMs: ms(samples.map((s) => s.agentToReadyMs)),
  };
}

const rounds = Number(process.argv[2] ?? 10);
const loadBefore = loadAverage();
const dir = mkdtempSync(join(tmpdir(), 'agentchart-bench-restart-'));
const results = [await measure('sqlite', join(dir, 'sessions.db'), rounds)];
const started = await startPostgres();
if ('server' in started) {
  const admin = new pg.Client({ connectionString: started.server.connectionString });
  await admin.connect();
  await admin.query('CREATE DATABASE bench_restart');
  await admin.end();
  const target = started.server.connectionString.replace(/\/postgres$/, '/bench_restart');
  try {
    results.push(await measure('postgres', target, rounds));
  } finally {
    started.server.stop();
  }
} else {
  console.log(`postgres skipped: ${started.skipped}`);
}
rmSync(dir, { recursive: true, force: true });
console.log(`restart after kill -9, ${rounds} rounds (median), load ${loadBefore['1m']} → ${loadAverage()['1m']}`);
console.log('| store | spawn → resumed run (ms) | slowest (ms) | createAgent → ready (ms) |');
console.log('|---|---|---|---|');
for (const r of results)
  console.log(`| ${r.store} | ${r.restartToReadyMs} | ${r.restartToReadyMaxMs} | ${r.agentToReadyMs} |`);
