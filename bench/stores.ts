import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type AnyTool, type SessionStore } from 'agentchart';
import type { SessionStep } from 'agentchart/store-kit';
import { postgresStore } from 'agentchart/postgres';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';
import { startPostgres } from '../test/support/postgres.js';
import { round2 } from './stats.js';

/**
 * commitStep latency of the durable stores: the steps of a real 200-turn session
 * (recorded from an agent on the memory store) are committed again, one after another, to SQLite
 * (WAL, synchronous=NORMAL, a file in the temp dir) and to a PostgreSQL the benchmark starts
 * (its default durability settings: fsync on, synchronous_commit on), over a loopback connection.
 */

export interface StoreLatency {
  store: 'sqlite' | 'postgres';
  steps: number;
  p50Us: number;
  p99Us: number;
  meanUs: number;
  skipped?: string;
}

export interface StoresResult {
  sqlite: StoreLatency;
  postgres: StoreLatency;
}

const read = defineTool({
  name: 'read_file',
  description: 'Reads a file.',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => `${path}: ${'x'.repeat(400)}`,
}) as unknown as AnyTool;

/** The steps a 200-turn file-reading session writes. */
export async function recordedSteps(turns: number): Promise<SessionStep[]> {
  const store = memoryStore();
  const steps: SessionStep[] = [];
  const recording: SessionStore = {
    ...store,
    commitStepSync: (id, step) => (steps.push(step), store.commitStepSync(id, step)),
  };
  const model = scriptedModel(
    (_r, call) =>
      call < turns
        ? {
            text: `Reading ${call}.`,
            toolCalls: [{ id: `c${call}`, name: 'read_file', arguments: { path: `src/f${call}.ts` } }],
          }
        : { text: 'Done.' },
    { recordRequests: false },
  );
  const agent = createAgent({ model, tools: [read], store: recording, sessionId: 'recorded' });
  await agent.ready;
  await agent.prompt('Read every file.').result;
  return steps;
}

async function latency(
  name: StoreLatency['store'],
  store: SessionStore,
  steps: SessionStep[],
  rounds: number,
  label: string,
): Promise<StoreLatency> {
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const sessionId = `${label}-${round}`;
    for (const step of steps) {
      const begin = performance.now();
      await store.commitStep(sessionId, { ...step, checkpoint: { ...step.checkpoint, sessionId } });
      times.push((performance.now() - begin) * 1000);
    }
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] as number;
  return {
    store: name,
    steps: times.length,
    p50Us: round2(at(0.5)),
    p99Us: round2(at(0.99)),
    meanUs: round2(times.reduce((a, b) => a + b, 0) / times.length),
  };
}

export async function storesBenchmark(rounds: number): Promise<StoresResult> {
  const steps = await recordedSteps(200);
  const dir = mkdtempSync(join(tmpdir(), 'agentchart-bench-store-'));
  const sqlite = sqliteStore(join(dir, 'bench.db'));
  // A warm-up session: statements prepared, pages cached.
  await latency('sqlite', sqlite, steps.slice(0, 50), 1, 'warm-up');
  const sqliteResult = await latency('sqlite', sqlite, steps, rounds, 'bench');
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });

  const started = await startPostgres({ durable: true });
  if (!('server' in started)) {
    return {
      sqlite: sqliteResult,
      postgres: { store: 'postgres', steps: 0, p50Us: 0, p99Us: 0, meanUs: 0, skipped: started.skipped },
    };
  }
  try {
    const postgres = postgresStore({ connectionString: started.server.connectionString });
    await latency('postgres', postgres, steps.slice(0, 50), 1, 'warm-up');
    const postgresResult = await latency('postgres', postgres, steps, rounds, 'bench');
    await postgres.close();
    return { sqlite: sqliteResult, postgres: postgresResult };
  } finally {
    started.server.stop();
  }
}
