import { spawn } from 'node:child_process';
import { createAgent, type RunResult } from 'agentchart';
import { startStudio } from 'agentchart/studio';
import { expectWork } from './drivers.js';
import { macrotask, median, sampled, startClock, type Sampled } from './stats.js';
import { benchTools, turnsModel } from './workload.js';

/**
 * What attaching the studio costs a run, per turn: the same workload with no studio, with the
 * studio attached and no page open, and with one page reading the stream (a reader in a
 * process of its own that takes every message and drops it, as a browser would). Modes alternate per
 * round; studio and page are set up before the timed span and stopped after it.
 */

export type StudioMode = 'off' | 'attached' | 'watched';

export interface StudioCost {
  unit: string;
  workload: string;
  modes: Record<StudioMode, Sampled>;
  /** Mode median / off median, wall clock and process CPU time. */
  ratio: Record<Exclude<StudioMode, 'off'>, number>;
  cpuRatio: Record<Exclude<StudioMode, 'off'>, number>;
  /** Bytes the watching page received per run (median). */
  bytesPerRun: number;
}

export async function studioCost(turns: number, calls: number, rounds: number, warmups: number): Promise<StudioCost> {
  const modes: StudioMode[] = ['off', 'attached', 'watched'];
  const wall: Record<StudioMode, number[]> = { off: [], attached: [], watched: [] };
  const cpu: Record<StudioMode, number[]> = { off: [], attached: [], watched: [] };
  const bytes: number[] = [];
  for (let round = 0; round < warmups + rounds; round++) {
    const order = modes.map((_, i) => modes[(i + round) % modes.length] as StudioMode);
    for (const mode of order) {
      const run = await timedRun(turns, calls, mode);
      expectWork(
        `studio ${mode}`,
        {
          ...run,
          turns: run.result.counters.turns,
          toolCallsExecuted: run.result.counters.toolCallsExecuted,
          status: run.result.status,
        },
        turns + 1,
        turns * calls,
      );
      if (round >= warmups) {
        wall[mode].push((run.ms * 1000) / (turns + 1));
        cpu[mode].push(run.cpuMs);
        if (mode === 'watched') bytes.push(run.bytes);
      }
      await macrotask();
    }
  }
  const ratio = (samples: Record<StudioMode, number[]>, mode: StudioMode) =>
    Number((median(samples[mode]) / median(samples.off)).toFixed(2));
  return {
    unit: 'µs/turn',
    workload: `T=${turns} × K=${calls}`,
    modes: { off: sampled(wall.off), attached: sampled(wall.attached), watched: sampled(wall.watched) },
    ratio: { attached: ratio(wall, 'attached'), watched: ratio(wall, 'watched') },
    cpuRatio: { attached: ratio(cpu, 'attached'), watched: ratio(cpu, 'watched') },
    bytesPerRun: Math.round(median(bytes)),
  };
}

async function timedRun(
  turns: number,
  calls: number,
  mode: StudioMode,
): Promise<{ ms: number; cpuMs: number; result: RunResult; bytes: number }> {
  const agent = createAgent({ model: turnsModel(turns, calls), tools: benchTools });
  const studio = mode === 'off' ? null : await startStudio({ agents: [agent] });
  const page = studio && mode === 'watched' ? await openPage(studio.url, 'live-1') : null;
  const clock = startClock();
  const result = await agent.prompt('go').result;
  const timing = clock.stop();
  // The page reads what the last flush sent before it is closed (outside the timed span).
  await new Promise((resolve) => setTimeout(resolve, 100));
  const received = (await page?.close()) ?? 0;
  await studio?.stop();
  return { ...timing, result, bytes: received };
}

/**
 * A page reading a session's stream in a process of its own (as a browser is), dropping what it
 * reads; `close()` ends it and resolves with the bytes it got.
 */
async function openPage(url: string, id: string): Promise<{ close(): Promise<number> }> {
  const reader = `
    const url = new URL(process.argv[1]);
    const response = await fetch(new URL('/api/stream?id=' + process.argv[2], url), {
      headers: { 'x-agentchart-token': url.searchParams.get('token') },
    });
    let received = 0;
    process.on('SIGTERM', () => { process.stdout.write(String(received)); process.exit(0); });
    const body = response.body.getReader();
    for (;;) {
      const { value, done } = await body.read();
      if (done) break;
      if (received === 0) process.stdout.write('ready\\n');
      received += value.byteLength;
    }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', reader, url, id], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const wait = setInterval(() => output.includes('ready') && (clearInterval(wait), resolve()), 5);
    child.once('exit', (code) => (clearInterval(wait), reject(new Error(`bench studio: the page exited (${code})`))));
  });
  return {
    close: () =>
      new Promise<number>((resolve) => {
        child.once('exit', () => resolve(Number(output.slice(output.indexOf('ready') + 6)) || 0));
        child.kill('SIGTERM');
      }),
  };
}
