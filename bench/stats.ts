import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The median of the samples (the mean of the two middle ones for an even count). */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) throw new Error('bench: median of no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Samples with their median, rounded for the report. */
export interface Sampled {
  median: number;
  min: number;
  max: number;
  samples: number[];
}

export function sampled(samples: readonly number[], digits = 2): Sampled {
  const round = (value: number) => Number(value.toFixed(digits));
  return {
    median: round(median(samples)),
    min: round(Math.min(...samples)),
    max: round(Math.max(...samples)),
    samples: samples.map(round),
  };
}

// `npm run bench` starts node without --expose-gc; the flag can still be set at runtime and the
// `gc` function fetched from a fresh context, so memory figures are taken after a full collection.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/** One full garbage collection, synchronous (where a wait for finalizers cannot be had). */
export function collectNow(): void {
  collect();
}

/** Full garbage collection, repeated so weak references and finalizers settle. */
export async function fullGc(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    collect();
    await macrotask();
  }
}

/** Yields to the event loop once (lets timers, I/O and other macrotasks run). */
export function macrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Live JS memory: V8 heap plus external (array buffers, native) bytes. */
export function liveBytes(): number {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

export function rssBytes(): number {
  return process.memoryUsage.rss();
}

/** The process's peak resident set size so far (the kernel's high-water mark). */
export function peakRssBytes(): number {
  return process.resourceUsage().maxRSS * 1024;
}

export const MB = 1024 * 1024;

export function loadAverage(): { '1m': number; '5m': number; '15m': number } {
  const [one, five, fifteen] = loadavg();
  return { '1m': round2(one ?? 0), '5m': round2(five ?? 0), '15m': round2(fifteen ?? 0) };
}

export function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/** Microseconds since an arbitrary origin. */
export function nowUs(): number {
  return performance.now() * 1000;
}

/** Wall-clock and process CPU time of one measured span, in ms. */
export interface Timing {
  ms: number;
  cpuMs: number;
}

/**
 * Starts measuring wall-clock and CPU time. On a shared machine the wall clock also counts time
 * spent waiting for a core; CPU time does not, so both are reported.
 */
export function startClock(): { stop(): Timing } {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return {
    stop() {
      const used = process.cpuUsage(cpu);
      return { ms: performance.now() - wall, cpuMs: (used.user + used.system) / 1000 };
    },
  };
}

/** Time on a CPU in ms: the calling thread's, and the sum over the process's threads. */
export interface Runtime {
  threadMs: number;
  processMs: number;
}

/**
 * The scheduler's own count of time on a CPU (Linux's schedstat, in ns), where it can be read:
 * `process.cpuUsage()` may be sampled at the timer's tick (4 ms on the machines this runs on), too
 * coarse for runs of tens of milliseconds. Elsewhere, the thread's and process's CPU clocks.
 */
export function startRuntimeClock(): { stop(): Runtime } {
  const start = runtimeNow();
  return {
    stop() {
      const end = runtimeNow();
      const threadMs = end.threadMs - start.threadMs;
      let processMs = 0;
      for (const [thread, ms] of end.threads) processMs += ms - (start.threads.get(thread) ?? 0);
      return { threadMs, processMs };
    },
  };
}

const schedstatMs = (path: string) => Number(readFileSync(path, 'utf8').split(' ')[0]) / 1e6;

function runtimeNow(): { threadMs: number; threads: Map<string, number> } {
  const threads = new Map<string, number>();
  try {
    const threadMs = schedstatMs('/proc/thread-self/schedstat');
    for (const thread of readdirSync('/proc/self/task')) {
      try {
        threads.set(thread, schedstatMs(`/proc/self/task/${thread}/schedstat`));
      } catch {
        // The thread ended meanwhile.
      }
    }
    return { threadMs, threads };
  } catch {
    const thread = process.threadCpuUsage();
    const all = process.cpuUsage();
    threads.set('process', (all.user + all.system) / 1000);
    return { threadMs: (thread.user + thread.system) / 1000, threads };
  }
}

/**
 * How sure a ratio of medians is: `median(a) / median(b)` over resamples of each (a bootstrap, with a
 * fixed seed so a rerun of the same samples gives the same interval), its 5th and 95th percentiles.
 */
export function ratioInterval(
  a: readonly number[],
  b: readonly number[],
  resamples = 2_000,
): { low: number; high: number } {
  return bootstrap((resample) => median(resample(a)) / median(resample(b)), resamples);
}

/** How sure a median is: its 90% bootstrap interval, as `ratioInterval` (for samples that are ratios already). */
export function medianInterval(samples: readonly number[], resamples = 2_000): { low: number; high: number } {
  return bootstrap((resample) => median(resample(samples)), resamples);
}

function bootstrap(
  statistic: (resample: (samples: readonly number[]) => number[]) => number,
  resamples: number,
): { low: number; high: number } {
  let seed = 0x9e3779b9;
  const random = () => {
    // mulberry32: small, fast, and deterministic.
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const resample = (samples: readonly number[]) =>
    samples.map(() => samples[Math.floor(random() * samples.length)] as number);
  const values: number[] = [];
  for (let i = 0; i < resamples; i++) values.push(statistic(resample));
  values.sort((x, y) => x - y);
  const at = (q: number) => Number((values[Math.floor(q * (values.length - 1))] as number).toFixed(3));
  return { low: at(0.05), high: at(0.95) };
}
