import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createAgent } from 'agentchart';
import { CONTENDERS, timeTurns, type Contender } from './drivers.js';
import { handLoop } from './hand-loop.js';
import { startClock, type Timing } from './stats.js';
import { prepareStreaming, type StreamingContender } from './streaming.js';
import { relayModel, stalledModel, benchTools, turnsModel } from './workload.js';
import { runSkeleton } from './xstate-floor.js';

/**
 * One benchmark workload in a loop, for a CPU profile (see bench/README.md):
 *   node --cpu-prof --cpu-prof-dir=bench/profiles --import tsx bench/profile.ts <workload> [seconds] [contender]
 * Workloads: perTurn (T=200 × K=1), perTool (T=50 × K=20), batch10 and batch1000 (one turn of K=10 or
 * 1,000), short (T=1 × K=1; unit: a session), history (2,000 turns), streaming (T=50 × D=200 text
 * deltas, live subscriber; unit: a delta), sessions (1,000 idle sessions prompted then aborted), relay
 * (3 × 100,000 updates), durableTurn and durableTool (T=200 × K=1 and T=50 × K=20 on sqliteStore;
 * unit: a session), create (createAgent).
 * The contender is agentchart (default), `hand` (the hand-written loop), `pi`, `aiSdk` or
 * `aiSdkGenerate`; the peers run the turn workloads and streaming only; `skeleton` (the XState floor,
 * bench/xstate-floor.ts) runs perTurn. With `--out=<file>` the process profiles itself instead (no
 * --cpu-prof): only the loop, after a warm-up, so samples and counted units cover the same span; with
 * `--alloc=<file>` it takes a sampling heap profile of every allocation of the loop instead (objects
 * collected since included). The last line on stderr is a JSON summary that profile-compare.ts reads.
 */

/** T and K of the turn workloads, which every contender runs (the peers through bench/drivers.ts). */
const turnWorkloads = {
  perTurn: { turns: 200, calls: 1, per: 'turn' },
  perTool: { turns: 50, calls: 20, per: 'toolCall' },
  batch10: { turns: 1, calls: 10, per: 'toolCall' },
  batch1000: { turns: 1, calls: 1_000, per: 'toolCall' },
  short: { turns: 1, calls: 1, per: 'session' },
  history: { turns: 2_000, calls: 1, per: 'turn' },
} as const;

const otherWorkloads = {
  relay: async () => {
    await (hand
      ? handLoop('go', { model: relayModel(3, 100_000), tools: benchTools })
      : createAgent({ model: relayModel(3, 100_000), tools: benchTools }).prompt('go').result);
  },
  sessions: async () => {
    const agents = Array.from({ length: 1_000 }, () => createAgent({ model: stalledModel(), tools: benchTools }));
    const results = agents.map((agent) => agent.prompt('hello').result);
    await new Promise((resolve) => setImmediate(resolve));
    for (const agent of agents) agent.abort();
    await Promise.all(results);
  },
  // The durable-session targets' workloads: per turn and per tool call with sqliteStore (a new database per session).
  // Imported when used: node:sqlite is loaded by these workloads only.
  durableTurn: async () => void (await (await import('./durable-ratio.js')).timeDurable('sqlite', 200, 1)),
  durableTool: async () => void (await (await import('./durable-ratio.js')).timeDurable('sqlite', 50, 20)),
  create: async () => {
    const model = turnsModel(0, 0);
    for (let i = 0; i < 1_000; i++) createAgent({ model, tools: benchTools });
  },
} satisfies Record<string, () => Promise<void>>;

/** The streaming workload: T turns of D text deltas and one tool call, a live subscriber checking every delta. */
const STREAMING = { turns: 50, deltas: 200 } as const;

type Workload = keyof typeof turnWorkloads | keyof typeof otherWorkloads | 'streaming';
const workloadNames = [...Object.keys(turnWorkloads), ...Object.keys(otherWorkloads), 'streaming'];

const name = process.argv[2] as Workload | undefined;
const seconds = Number(process.argv[3] ?? 10);
const contender: Contender | 'skeleton' =
  [...CONTENDERS, 'skeleton' as const].find((c) => c !== 'agentchart' && process.argv.slice(3).includes(c)) ??
  'agentchart';
const hand = contender === 'hand';
if (!name || !workloadNames.includes(name)) {
  process.stderr.write(
    `usage: bench/profile.ts <${workloadNames.join('|')}> [seconds] [${[...CONTENDERS, 'skeleton'].join('|')}]\n`,
  );
  process.exit(2);
}
const turnWorkload = name in turnWorkloads ? turnWorkloads[name as keyof typeof turnWorkloads] : undefined;
const runs =
  (name === 'streaming' && contender !== 'hand' && contender !== 'skeleton') ||
  (contender === 'skeleton' && name === 'perTurn') ||
  (turnWorkload && contender !== 'skeleton') ||
  contender === 'agentchart' ||
  contender === 'hand';
if (!runs) {
  process.stderr.write(`profile: ${contender} does not run ${name}\n`);
  process.exit(2);
}

async function once(): Promise<void> {
  if (name === 'streaming') {
    const run = await prepareStreaming(contender as StreamingContender, STREAMING.turns, STREAMING.deltas)();
    if (run.status !== 'completed') throw new Error(`profile: streaming ${contender} ended ${run.status}`);
    return;
  }
  if (contender === 'skeleton') return runSkeleton(200);
  if (!turnWorkload) return otherWorkloads[name as keyof typeof otherWorkloads]();
  const { turns, calls } = turnWorkload;
  const run = await timeTurns(contender, turns, calls);
  if (run.status !== 'completed' || run.turns !== turns + 1 || run.toolCallsExecuted !== turns * calls) {
    throw new Error(
      `profile: ${contender} ended ${run.status} after ${run.turns} turns and ${run.toolCallsExecuted} tool calls`,
    );
  }
}

/** Runs the workload until `forSeconds` have passed; how many times, and the wall and process CPU time it took. */
async function loop(forSeconds: number): Promise<{ iterations: number } & Timing> {
  const clock = startClock();
  const deadline = performance.now() + forSeconds * 1000;
  let count = 0;
  while (performance.now() < deadline) {
    await once();
    count++;
  }
  return { iterations: count, ...clock.stop() };
}

const out = process.argv.find((arg) => arg.startsWith('--out='))?.slice('--out='.length);
const alloc = process.argv.find((arg) => arg.startsWith('--alloc='))?.slice('--alloc='.length);
let measured: { iterations: number } & Timing;
if (alloc) {
  await loop(Math.min(2, seconds / 5));
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  measured = await loop(seconds);
  const { profile } = await session.post('HeapProfiler.getSamplingProfile');
  await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  writeFileSync(alloc, JSON.stringify(profile));
} else if (out) {
  await loop(Math.min(2, seconds / 5));
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  await session.post('Profiler.start');
  measured = await loop(seconds);
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  writeFileSync(out, JSON.stringify(profile));
} else {
  measured = await loop(seconds);
}
const { iterations, ms, cpuMs } = measured;
process.stderr.write(
  `profile: ${name}${contender === 'agentchart' ? '' : ` (${contender})`} ran ${iterations} times in ${seconds} s\n`,
);
/** Units of the workloads that are not T × K turns but count turns or tool calls all the same. */
const otherUnits: Partial<Record<Workload, { per: number; unit: string }>> = {
  durableTurn: { per: 201, unit: 'turn' },
  durableTool: { per: 50 * 20, unit: 'toolCall' },
};
const units =
  name === 'streaming'
    ? iterations * (STREAMING.turns + 1) * STREAMING.deltas
    : turnWorkload
      ? iterations *
        (turnWorkload.per === 'turn'
          ? turnWorkload.turns + 1
          : turnWorkload.per === 'session'
            ? 1
            : turnWorkload.turns * turnWorkload.calls)
      : iterations * (otherUnits[name]?.per ?? 1);
const unit = name === 'streaming' ? 'delta' : turnWorkload ? turnWorkload.per : (otherUnits[name]?.unit ?? 'iteration');
const summary = JSON.stringify({ workload: name, contender, iterations, units, unit, ms, cpuMs });
// On stderr for profile-compare.ts, on stdout for bench/subprocess.ts.
process.stderr.write(`${summary}\n`);
process.stdout.write(`${summary}\n`);
