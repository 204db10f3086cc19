import type { LoadLibrary, LoadRun } from './load.js';
import { median } from './stats.js';
import { runChild } from './subprocess.js';

/**
 * The load scenario beside pi: for each size, agentchart and pi alternate, each run a process of
 * its own (bench/load.ts) so its peak RSS is its own; then agentchart once more on `scriptedModel`
 * with its defaults (every request recorded), to show what the test kit's recording costs.
 */

export interface LoadFigures {
  /** Medians over the runs. */
  wallMs: number;
  cpuMs: number;
  peakRssMB: number;
  peakHeapMB: number;
  heapAfterMB: number;
  runs: LoadRun[];
}

export interface LoadSize {
  sessions: number;
  turns: number;
  tools: number;
  agentchart: LoadFigures;
  pi: LoadFigures;
  /** agentchart / pi, medians. */
  wallRatio: number;
  cpuRatio: number;
  rssRatio: number;
}

export interface LoadScenario {
  sizes: LoadSize[];
  /** agentchart on scriptedModel (requests recorded), one run. */
  scripted: LoadRun | null;
}

/** Enough heap for 10,000 sessions of either library; the load is measured, not capped. */
const NODE_FLAGS = ['--max-old-space-size=8192'];

function run(library: LoadLibrary, sessions: number, turns: number, tools: number): Promise<LoadRun> {
  return runChild<LoadRun>('load.ts', [library, String(sessions), String(turns), String(tools)], NODE_FLAGS);
}

function figures(runs: LoadRun[]): LoadFigures {
  const med = (pick: (r: LoadRun) => number) => median(runs.map(pick));
  return {
    wallMs: med((r) => r.wallMs),
    cpuMs: med((r) => r.cpuMs),
    peakRssMB: med((r) => r.peakRssMB),
    peakHeapMB: med((r) => r.peakHeapMB),
    heapAfterMB: med((r) => r.heapAfterMB),
    runs,
  };
}

export async function loadScenario(
  sizes: readonly { sessions: number; rounds: number }[],
  scriptedSessions: number | null,
  turns = 20,
  tools = 3,
  onRun: (run: LoadRun) => void = () => {},
): Promise<LoadScenario> {
  const measured: LoadSize[] = [];
  for (const { sessions, rounds } of sizes) {
    const runs: Record<'agentchart' | 'pi', LoadRun[]> = { agentchart: [], pi: [] };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['agentchart', 'pi'] as const) : (['pi', 'agentchart'] as const);
      for (const library of order) {
        const result = await run(library, sessions, turns, tools);
        onRun(result);
        runs[library].push(result);
      }
    }
    const agentchart = figures(runs.agentchart);
    const pi = figures(runs.pi);
    const ratio = (a: number, b: number) => Number((a / b).toFixed(2));
    measured.push({
      sessions,
      turns,
      tools,
      agentchart,
      pi,
      wallRatio: ratio(agentchart.wallMs, pi.wallMs),
      cpuRatio: ratio(agentchart.cpuMs, pi.cpuMs),
      rssRatio: ratio(agentchart.peakRssMB, pi.peakRssMB),
    });
  }
  const scripted = scriptedSessions === null ? null : await run('scripted', scriptedSessions, turns, tools);
  if (scripted) onRun(scripted);
  return { sizes: measured, scripted };
}
