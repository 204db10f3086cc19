import { fileURLToPath } from 'node:url';
import { timedRun, type StudioMode } from './studio.js';

/**
 * One mode of bench/studio.ts, run by itself many times, for a CPU profile of what attaching (or
 * watching) costs the agent's process: compare the profiles of `off` and another mode.
 *   npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.dist.json \
 *     node --cpu-prof --cpu-prof-dir=bench/profiles --import tsx bench/studio-profile.ts watched 40
 * Prints the mode's median process CPU time per turn.
 */
export async function profileMode(mode: StudioMode, runs: number, turns = 200): Promise<number[]> {
  const cpu: number[] = [];
  for (let run = 0; run < runs; run++) {
    const timing = await timedRun(turns, 1, mode);
    if (timing.result.status !== 'completed') throw new Error(`bench studio-profile: the run ${timing.result.status}`);
    cpu.push((timing.cpuMs * 1000) / (turns + 1));
  }
  return cpu;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [mode = 'watched', runs = '40'] = process.argv.slice(2);
  const cpu = (await profileMode(mode as StudioMode, Number(runs))).sort((a, b) => a - b);
  console.log(JSON.stringify({ mode, runs: Number(runs), cpuMedianUsPerTurn: cpu[cpu.length >> 1] }));
}
