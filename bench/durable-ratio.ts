import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent } from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { expectWork, interleave, type TimedRun } from './drivers.js';
import { median, sampled, startClock, type Sampled } from './stats.js';
import { benchTools, turnsModel } from './workload.js';

/**
 * Durable sessions: the same T×K workload with `sqliteStore` (a new database in a temp dir for
 * every run; opening it and loading the session are not timed) against the same agent in memory,
 * alternating. With a store every step is written before the next tool starts and every lifecycle
 * event before a subscriber sees it, so this is the cost of those writes.
 */

export type Durability = 'memory' | 'sqlite';

export interface DurableRatio {
  unit: string;
  workload: string;
  wall: Record<Durability, Sampled>;
  cpu: Record<Durability, Sampled>;
  /** sqlite / memory: medians (wall, CPU) and the median of per-round ratios (paired). */
  ratio: number;
  cpuRatio: number;
  pairedRatio: number;
  /** The database file after one session (the agent closed), and its WAL beside it, KB. */
  fileKB: number;
  walKB: number;
}

export async function timeDurable(
  durability: Durability,
  turns: number,
  calls: number,
): Promise<TimedRun & { fileKB: number; walKB: number }> {
  const model = turnsModel(turns, calls);
  if (durability === 'memory') {
    const agent = createAgent({ model, tools: benchTools });
    const clock = startClock();
    const result = await agent.prompt('go').result;
    const { turns: done, toolCallsExecuted } = result.counters;
    return { ...clock.stop(), status: result.status, turns: done, toolCallsExecuted, fileKB: 0, walKB: 0 };
  }
  const dir = mkdtempSync(join(tmpdir(), 'agentchart-durable-'));
  const path = join(dir, 'bench.db');
  const store = sqliteStore(path);
  try {
    const agent = createAgent({ model, tools: benchTools, store, sessionId: 'bench' });
    await agent.ready;
    const clock = startClock();
    const result = await agent.prompt('go').result;
    const timing = clock.stop();
    await agent.close();
    const size = (file: string) => {
      try {
        return statSync(file).size;
      } catch {
        return 0;
      }
    };
    const { turns: done, toolCallsExecuted } = result.counters;
    const [fileKB, walKB] = [size(path) / 1024, size(`${path}-wal`) / 1024];
    return { ...timing, status: result.status, turns: done, toolCallsExecuted, fileKB, walKB };
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function durableRatio(
  turns: number,
  calls: number,
  per: 'turn' | 'toolCall',
  rounds: number,
  warmups: number,
): Promise<DurableRatio> {
  const files: number[] = [];
  const wals: number[] = [];
  const samples = await interleave<Durability, TimedRun>(['memory', 'sqlite'], rounds, warmups, async (durability) => {
    const run = await timeDurable(durability, turns, calls);
    expectWork(`durable ${durability}`, run, turns + 1, turns * calls);
    if (durability === 'sqlite') {
      files.push(run.fileKB);
      wals.push(run.walKB);
    }
    return run;
  });
  const units = per === 'turn' ? turns + 1 : turns * calls;
  const perUnit = (durability: Durability, pick: (run: TimedRun) => number) =>
    samples[durability].map((run) => (pick(run) * 1000) / units);
  const wall = { memory: sampled(perUnit('memory', (r) => r.ms)), sqlite: sampled(perUnit('sqlite', (r) => r.ms)) };
  const cpu = {
    memory: sampled(perUnit('memory', (r) => r.cpuMs)),
    sqlite: sampled(perUnit('sqlite', (r) => r.cpuMs)),
  };
  const memory = perUnit('memory', (r) => r.ms);
  const paired = perUnit('sqlite', (r) => r.ms).map((value, round) => value / (memory[round] as number));
  const ratio = (a: number, b: number) => Number((a / b).toFixed(2));
  return {
    unit: per === 'turn' ? 'µs/turn' : 'µs/tool call',
    workload: `T=${turns} × K=${calls}`,
    wall,
    cpu,
    ratio: ratio(wall.sqlite.median, wall.memory.median),
    cpuRatio: ratio(cpu.sqlite.median, cpu.memory.median),
    pairedRatio: ratio(median(paired), 1),
    fileKB: Math.round(median(files)),
    walKB: Math.round(median(wals)),
  };
}
