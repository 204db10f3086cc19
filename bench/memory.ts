import { CONTENDERS, type Contender } from './drivers.js';
import type { IdleAgents, IdleLibrary } from './idle-agents.js';
import type { SessionHeap } from './session-heap.js';
import { median } from './stats.js';
import { runChild } from './subprocess.js';

/**
 * Memory measured in processes of their own: idle agents (bench/idle-agents.ts) and the heap of a
 * long session (bench/session-heap.ts), for agentchart and the peers.
 */

export interface SessionHeapFigures {
  turns: number;
  /** Medians over the runs, MB. */
  liveMB: number;
  retainedMB: number;
  usedMB: number;
  runs: SessionHeap[];
}

export interface MemoryResults {
  idle: Record<IdleLibrary, IdleAgents>;
  sessionHeap: Record<Contender, SessionHeapFigures>;
}

/**
 * `runs` processes per library for the session heap; the AI SDK's `runs` are capped at one (its
 * long sessions take seconds: every step rebuilds the messages of the steps before).
 */
export async function memoryBenchmark(idleCount: number, turns: number, runs: number): Promise<MemoryResults> {
  const idle = {} as Record<IdleLibrary, IdleAgents>;
  for (const library of ['agentchart', 'pi'] as const)
    idle[library] = await runChild<IdleAgents>('idle-agents.ts', [library, String(idleCount)]);
  const heaps = Object.fromEntries(CONTENDERS.map((c) => [c, [] as SessionHeap[]])) as Record<Contender, SessionHeap[]>;
  for (let round = 0; round < runs; round++) {
    for (const contender of round % 2 === 0 ? CONTENDERS : [...CONTENDERS].reverse()) {
      if (round > 0 && (contender === 'aiSdk' || contender === 'aiSdkGenerate')) continue;
      heaps[contender].push(await runChild<SessionHeap>('session-heap.ts', [contender, String(turns)]));
    }
  }
  const figures = (samples: SessionHeap[]): SessionHeapFigures => ({
    turns,
    liveMB: median(samples.map((s) => s.liveMB)),
    retainedMB: median(samples.map((s) => s.retainedMB)),
    usedMB: median(samples.map((s) => s.usedMB)),
    runs: samples,
  });
  const sessionHeap = Object.fromEntries(CONTENDERS.map((c) => [c, figures(heaps[c])])) as Record<
    Contender,
    SessionHeapFigures
  >;
  return { idle, sessionHeap };
}
