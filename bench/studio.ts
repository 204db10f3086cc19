import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createAgent, type RunResult } from 'agentchart';
import { startStudio } from 'agentchart/studio';
import { expectWork } from './drivers.js';
import {
  fullGc,
  macrotask,
  median,
  medianInterval,
  ratioInterval,
  sampled,
  startClock,
  startRuntimeClock,
  type Sampled,
} from './stats.js';
import { benchTools, turnsModel } from './workload.js';

/**
 * What attaching the studio costs a run, per turn: the same workload with no studio, with the
 * studio attached and no page open, with one page reading the stream (a reader in a process of its
 * own that takes every message and drops it, as a browser would), and with a page that stopped
 * reading after its first message (a paused tab: the studio drops what it cannot send, never waits).
 * Modes alternate per round, with a second run with no studio in each (the control: how far the
 * machine's load alone moves a ratio); studio and page are set up before the timed span and stopped
 * after it, and every run starts after a full collection. The target is the agent's thread's time on
 * a CPU per turn (the scheduler's count, in ns: the kernel's CPU clocks here are sampled at a 4 ms
 * tick, as coarse as the difference measured), counted until the studio has sent the run's last
 * events; all the process's threads beside it; and the time the studio's own work took (its flushes and
 * their socket writes), also against the rest of the same run.
 *
 * Alone: `npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.dist.json npx tsx bench/studio.ts`.
 */

export type StudioMode = 'off' | 'attached' | 'watched' | 'stalled';
type PageMode = Exclude<StudioMode, 'off' | 'attached'>;
/** A round's runs: each mode, and a second run with no studio (the control). */
type Slot = StudioMode | 'control';

export interface StudioCost {
  unit: string;
  workload: string;
  modes: Record<StudioMode, Sampled>;
  /**
   * The agent's thread's time on a CPU per turn (user and kernel: on loopback the kernel's share of
   * the page's socket lands here too), per mode: the page's own process is not in it.
   */
  cpu: Record<StudioMode, Sampled>;
  /** The same for all the agent process's threads (the collector's helpers too): medians, and their ratio to `off`. */
  processCpu?: { median: Record<StudioMode, number>; ratio: Record<Exclude<StudioMode, 'off'>, number> };
  /** Mode median / off median, wall clock and the thread's CPU time. */
  ratio: Record<Exclude<StudioMode, 'off'>, number>;
  cpuRatio: Record<Exclude<StudioMode, 'off'>, number>;
  /**
   * How sure each CPU ratio is: a 90% interval (bootstrap over the rounds). One run's time varies by
   * up to 2× on a shared machine, so a few per cent needs many rounds.
   */
  cpuRatioInterval?: Record<Exclude<StudioMode, 'off'>, { low: number; high: number }>;
  rounds?: number;
  /**
   * The method's own noise: a second run with no studio in every round, against the first (an
   * A/A test), with its interval. Its distance from 1 is what the machine alone moves a ratio.
   */
  control?: { cpuRatio: number; low: number; high: number };
  /**
   * The studio's own work, per turn: the wall time its flushes and their socket writes took on the
   * agent's thread (synchronous, so the thread did nothing else; the key's name is older than that
   * clock), and as a share of a turn's CPU with no studio. The end-to-end ratio's floor.
   */
  flushCpu?: {
    watched: Sampled;
    stalled: Sampled;
    share: { watched: number; stalled: number };
    /**
     * The same work against the rest of the same run's thread time (`flush / (thread − flush)`),
     * its median over the rounds and 90% interval: measured within one run, so the machine's speed
     * that moves whole runs by up to 2× cancels out. Slowdowns the studio causes outside its own
     * code (the agent's caches, the collector) are not in it; the end-to-end ratio holds them.
     */
    ownShare?: Record<PageMode, { median: number; low: number; high: number }>;
  };
  /** Bytes the watching page received per run (median). */
  bytesPerRun: number;
  /** Messages the studio dropped for the stalled page per run (median): it fell behind, and was let go. */
  stalledDropped: number;
  /** The most bytes the studio held for the stalled page (the largest of all runs). */
  stalledPeakBuffered: number;
}

export async function studioCost(turns: number, calls: number, rounds: number, warmups: number): Promise<StudioCost> {
  const modes: Slot[] = ['off', 'attached', 'watched', 'stalled', 'control'];
  const wall: Record<Slot, number[]> = { off: [], attached: [], watched: [], stalled: [], control: [] };
  const cpu: Record<Slot, number[]> = { off: [], attached: [], watched: [], stalled: [], control: [] };
  const all: Record<Slot, number[]> = { off: [], attached: [], watched: [], stalled: [], control: [] };
  const bytes: number[] = [];
  const flushCpu: { watched: number[]; stalled: number[] } = { watched: [], stalled: [] };
  const ownShare: { watched: number[]; stalled: number[] } = { watched: [], stalled: [] };
  const dropped: number[] = [];
  let peakBuffered = 0;
  for (let round = 0; round < warmups + rounds; round++) {
    const order = modes.map((_, i) => modes[(i + round) % modes.length] as Slot);
    for (const mode of order) {
      const run = await timedRun(turns, calls, mode === 'control' ? 'off' : mode);
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
        cpu[mode].push((run.cpuMs * 1000) / (turns + 1));
        all[mode].push((run.processCpuMs * 1000) / (turns + 1));
        if (mode === 'watched') bytes.push(run.bytes);
        if (mode === 'watched' || mode === 'stalled') {
          flushCpu[mode].push((run.flushMs * 1000) / (turns + 1));
          ownShare[mode].push(run.flushMs / (run.cpuMs - run.flushMs));
        }
        if (mode === 'stalled') {
          dropped.push(run.dropped);
          peakBuffered = Math.max(peakBuffered, run.peakBuffered);
        }
      }
      await macrotask();
    }
  }
  const ratio = (samples: Record<Slot, number[]>, mode: Slot) =>
    Number((median(samples[mode]) / median(samples.off)).toFixed(2));
  const interval = (mode: Slot) => ratioInterval(cpu[mode], cpu.off);
  return {
    unit: 'µs/turn',
    workload: `T=${turns} × K=${calls}`,
    modes: {
      off: sampled(wall.off),
      attached: sampled(wall.attached),
      watched: sampled(wall.watched),
      stalled: sampled(wall.stalled),
    },
    cpu: {
      off: sampled(cpu.off),
      attached: sampled(cpu.attached),
      watched: sampled(cpu.watched),
      stalled: sampled(cpu.stalled),
    },
    processCpu: {
      median: {
        off: round1(median(all.off)),
        attached: round1(median(all.attached)),
        watched: round1(median(all.watched)),
        stalled: round1(median(all.stalled)),
      },
      ratio: { attached: ratio(all, 'attached'), watched: ratio(all, 'watched'), stalled: ratio(all, 'stalled') },
    },
    ratio: { attached: ratio(wall, 'attached'), watched: ratio(wall, 'watched'), stalled: ratio(wall, 'stalled') },
    cpuRatio: { attached: ratio(cpu, 'attached'), watched: ratio(cpu, 'watched'), stalled: ratio(cpu, 'stalled') },
    cpuRatioInterval: { attached: interval('attached'), watched: interval('watched'), stalled: interval('stalled') },
    rounds,
    control: { cpuRatio: ratio(cpu, 'control'), ...interval('control') },
    flushCpu: {
      watched: sampled(flushCpu.watched),
      stalled: sampled(flushCpu.stalled),
      share: {
        watched: Number((median(flushCpu.watched) / median(cpu.off)).toFixed(3)),
        stalled: Number((median(flushCpu.stalled) / median(cpu.off)).toFixed(3)),
      },
      ownShare: { watched: shareOf(ownShare.watched), stalled: shareOf(ownShare.stalled) },
    },
    bytesPerRun: Math.round(median(bytes)),
    stalledDropped: Math.round(median(dropped)),
    stalledPeakBuffered: peakBuffered,
  };
}

const round1 = (value: number) => Number(value.toFixed(1));
const shareOf = (samples: number[]) => ({ median: Number(median(samples).toFixed(3)), ...medianInterval(samples) });

/** After a run, the studio's last flush has been sent and read within this (the same wait in every mode). */
const SETTLE_MS = 150;

/**
 * One run in `mode`. `ms` is the run's wall clock; `cpuMs` the agent's thread's time on a CPU from
 * the run's start until the studio has sent the run's last events (a flush after the run is the
 * run's cost too), `processCpuMs` all its threads'.
 */
export async function timedRun(
  turns: number,
  calls: number,
  mode: StudioMode,
): Promise<{
  ms: number;
  cpuMs: number;
  processCpuMs: number;
  result: RunResult;
  bytes: number;
  dropped: number;
  peakBuffered: number;
  flushMs: number;
}> {
  const agent = createAgent({ model: turnsModel(turns, calls), tools: benchTools });
  const studio = mode === 'off' ? null : await startStudio({ agents: [agent] });
  const page = studio && (mode === 'watched' || mode === 'stalled') ? await openPage(studio.url, 'live-1', mode) : null;
  // Every mode starts from a collected heap: a collection left over from the previous run is not this run's.
  await fullGc();
  const flushedBefore = studio?.stats().flushMs ?? 0;
  const clock = startClock();
  const runtime = startRuntimeClock();
  const result = await agent.prompt('go').result;
  const { ms } = clock.stop();
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const { threadMs: cpuMs, processMs: processCpuMs } = runtime.stop();
  const flushMs = (studio?.stats().flushMs ?? 0) - flushedBefore;
  const client = studio?.stats().clients[0];
  const dropped = client?.dropped ?? 0;
  const peakBuffered = client?.peakBufferedBytes ?? 0;
  const received = (await page?.close()) ?? 0;
  await studio?.stop();
  return { ms, cpuMs, processCpuMs, result, bytes: received, dropped, peakBuffered, flushMs };
}

/**
 * A page reading a session's stream in a process of its own (as a browser is): `watched` reads and
 * drops everything, `stalled` stops reading after its first bytes (its socket paused: the kernel's
 * buffers fill, then the studio's). `close()` ends it and resolves with the bytes it got.
 */
export async function openPage(url: string, id: string, mode: PageMode): Promise<{ close(): Promise<number> }> {
  const reader = `
    import { connect } from 'node:net';
    const [href, id, mode] = process.argv.slice(1);
    const url = new URL(href);
    const socket = connect(Number(url.port), url.hostname);
    let received = 0;
    process.on('SIGTERM', () => { process.stdout.write(String(received)); process.exit(0); });
    socket.on('connect', () =>
      socket.write('GET /api/stream?id=' + id + ' HTTP/1.1\\r\\nHost: ' + url.host +
        '\\r\\nx-agentchart-token: ' + url.searchParams.get('token') + '\\r\\n\\r\\n'));
    socket.on('data', (chunk) => {
      if (received === 0) process.stdout.write('ready\\n');
      received += chunk.byteLength;
      if (mode === 'stalled') socket.pause();
    });
    // A socket that does not read keeps no process alive: this does, until SIGTERM.
    setInterval(() => {}, 60_000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', reader, url, id, mode], {
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

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [rounds = '15'] = process.argv.slice(2);
  const cost = await studioCost(200, 1, Number(rounds), 2);
  const { modes: _modes, cpu: _cpu, ...summary } = cost;
  console.log(
    JSON.stringify(
      {
        ...summary,
        cpuMedians: Object.fromEntries(Object.entries(cost.cpu).map(([m, s]) => [m, s.median])),
        wallMedians: Object.fromEntries(Object.entries(cost.modes).map(([m, s]) => [m, s.median])),
      },
      null,
      2,
    ),
  );
}
