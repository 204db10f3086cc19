import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { durableRatio } from './durable-ratio.js';
import { loadScenario } from './load-scenario.js';
import { longSession } from './long-session.js';
import { memoryBenchmark } from './memory.js';
import { otelCost } from './otel.js';
import { relayBenchmark } from './relay.js';
import { renderRestateMarkdown, restateBenchmark } from './restate.js';
import { renderMarkdown, type BenchResults } from './report.js';
import type { PeersInfo } from './report-peers.js';
import { sessionsBenchmark } from './sessions.js';
import { stepRecordCost } from './step-records.js';
import { storesBenchmark } from './stores.js';
import { durableCost } from './durable.js';
import { createAgent, defineTool, memoryStore } from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';
import { studioCost } from './studio.js';
import { streamingBenchmark } from './streaming.js';
import { xstateFloor } from './xstate-floor.js';
import { loadAverage, MB, median, peakRssBytes, round2, rssBytes } from './stats.js';
import {
  agentCreation,
  historyGrowth,
  inspectionCost,
  parityCheck,
  turnsBenchmark,
  validationCheck,
} from './throughput.js';

/**
 * `npm run bench`: every benchmark, agentchart against the hand-written loop, pi's agent core and
 * the AI SDK (the memory and load scenarios in processes of their own), then bench/results.md and
 * bench/results.json. `npm run bench -- --quick` is a smoke run for development (fewer rounds,
 * 1,000 idle sessions, 10,000 updates, 1,000 concurrent sessions at most) that writes
 * results.quick.{md,json} instead.
 */

const quick = process.argv.includes('--quick');
const rounds = (full: number) => (quick ? Math.max(1, Math.ceil(full / 4)) : full);
const warmups = (full: number) => (quick ? 1 : full);
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

const startedAt = performance.now();
const loadBefore = loadAverage();
// The machine is shared: its load is sampled through the run, so readers can discount noisy figures.
const loadSamples: number[] = [loadBefore['1m']];
const loadSampler = setInterval(() => loadSamples.push(loadAverage()['1m']), 5_000);
loadSampler.unref();
const peaks: Record<string, number> = {};
let peakSeen = 0;
const samplePeak = () => {
  peakSeen = Math.max(peakSeen, rssBytes());
};

async function step<T>(name: string, body: () => Promise<T>): Promise<T> {
  const begin = performance.now();
  process.stderr.write(`bench: ${name} … `);
  peakSeen = rssBytes();
  const value = await body();
  samplePeak();
  peaks[name] = round2(peakSeen / MB);
  process.stderr.write(`${((performance.now() - begin) / 1000).toFixed(1)} s (load ${loadAverage()['1m']})\n`);
  return value;
}

const parity = await step('parity', parityCheck);
if (!parity.ok)
  throw new Error(
    `bench: the hand loop and agentchart publish different events (first difference at #${parity.firstDifference})`,
  );

const peers = await step('peers', peersInfo);

// agentchart, the hand loop, pi and the AI SDK (two paths) in interleaved rounds;
// a multiple of 10 rounds completes the balanced orders.
const perTurn = await step('perTurn', () => turnsBenchmark(200, 1, 'turn', rounds(20), warmups(3)));
const perTool = await step('perTool', () => turnsBenchmark(50, 20, 'toolCall', rounds(20), warmups(3)));
const shortSession = await step('short session', () => turnsBenchmark(1, 1, 'session', rounds(40), warmups(4)));
const batch: Record<string, Awaited<ReturnType<typeof turnsBenchmark>>> = {};
for (const [calls, n] of [
  [10, 40],
  [100, 20],
  [1_000, 20],
] as const) {
  const runs = rounds(n);
  batch[String(calls)] = await step(`batch K=${calls}`, () => turnsBenchmark(1, calls, 'toolCall', runs, warmups(2)));
}
const floor = await step('xstate floor', () => xstateFloor(rounds(12), warmups(2)));
const streaming = await step('streaming', () => streamingBenchmark(50, 200, rounds(12), warmups(2)));
const history = await step('history', () => historyGrowth(2_000, rounds(7), 1, quick ? 1 : 2));
const inspection = await step('inspection', () => inspectionCost(200, 1, rounds(15), 2));
const inspectionTools = await step('inspection K=20', () => inspectionCost(50, 20, rounds(9), 2));
const otelTurn = await step('otel', () => otelCost(200, 1, rounds(15), 2));
const otelTools = await step('otel K=20', () => otelCost(50, 20, rounds(9), 2));
const creation = await step('agent creation', () => agentCreation(1_000, rounds(5)));
// 100 rounds: the studio's cost is a few per cent of a turn, and one run's time varies up to 2× on a shared machine.
const studio = await step('studio', () => studioCost(200, 1, rounds(100), warmups(2)));
const stepRecords = await step('step records', () => stepRecordCost(rounds(5)));
const relay = await step('relay', () => relayBenchmark(3, quick ? 10_000 : 100_000, rounds(5), 1));
const longTurns = quick ? 1_000 : 4_000;
const longPoints = quick ? [250, 1_000] : [1_000, 2_000, 4_000];
const longSessions = {
  sqlite: await step('long session (SQLite)', () => longSession(longTurns, longPoints, true)),
  noReplay: await step('long session (replayBuffer 0)', () => longSession(longTurns, longPoints, false, 0)),
};
const durableVsMemory = {
  perTurn: await step('durable (SQLite) per turn', () => durableRatio(200, 1, 'turn', rounds(10), warmups(2))),
  perTool: await step('durable (SQLite) per tool call', () => durableRatio(50, 20, 'toolCall', rounds(10), warmups(2))),
};
const stores = await step('stores (commitStep)', () => storesBenchmark(quick ? 1 : 3));
const durableImpl = { createAgent, defineTool, memoryStore, sqliteStore, scriptedModel };
const durable = await step(
  'durable run (per turn, per step)',
  async () => (await durableCost({ agentchart: durableImpl }, 200, rounds(10), warmups(2))).agentchart,
);
const sessions = await step('sessions', () => sessionsBenchmark(quick ? 1_000 : 10_000, rounds(5), samplePeak));
// In processes of their own, last: their peak RSS is not this process's.
const memory = await step('memory (own processes)', () => memoryBenchmark(10_000, 2_000, quick ? 1 : 2));
const loadSizes = quick
  ? [{ sessions: 200, rounds: 1 }]
  : [
      { sessions: 1_000, rounds: 1 },
      { sessions: 10_000, rounds: 1 },
    ];
const load = await step('load (own processes)', () =>
  loadScenario(loadSizes, quick ? 200 : 1_000, 20, 3, (run) =>
    process.stderr.write(`[${run.library} ${run.sessions}: ${(run.wallMs / 1000).toFixed(1)} s] `),
  ),
);
clearInterval(loadSampler);
loadSamples.push(loadAverage()['1m']);

const results: BenchResults = {
  generatedAt: new Date().toISOString(),
  quick,
  environment: {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    commit: gitCommit(),
    agentchartFrom: import.meta.resolve('agentchart').includes('/dist/') ? 'dist' : 'src',
    loadBefore,
    loadAfter: loadAverage(),
    loadDuring: {
      samples: loadSamples.length,
      min: Math.min(...loadSamples),
      median: median(loadSamples),
      max: Math.max(...loadSamples),
    },
    durationSeconds: Math.round((performance.now() - startedAt) / 1000),
    peakRssMB: round2(peakRssBytes() / MB),
    peakRssMBByStep: peaks,
  },
  parity,
  perTurn,
  perTool,
  batch,
  history,
  sessions,
  longSessions,
  stores,
  durable,
  relay,
  inspection: { perTurn: inspection, perTool: inspectionTools },
  otel: { perTurn: otelTurn, perTool: otelTools },
  agentCreationUs: creation,
  studio,
  stepRecords,
  floor,
  streaming,
  durableRatio: durableVsMemory,
  memory,
  load,
  peers: { ...peers, shortSession },
};

const base = quick ? 'results.quick' : 'results';
writeFileSync(here(`./${base}.json`), `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(here(`./${base}.md`), renderMarkdown(results));
process.stderr.write(
  `bench: wrote bench/${base}.md and bench/${base}.json in ${results.environment.durationSeconds} s\n`,
);

// On Restate: a server and a worker process of their own, written to bench/restate-results.{md,json}.
const onRestate = await step('restate', () => restateBenchmark(rounds(15)));
if (onRestate) {
  writeFileSync(here(`./restate-${base}.json`), `${JSON.stringify(onRestate, null, 2)}\n`);
  writeFileSync(here(`./restate-${base}.md`), renderRestateMarkdown(onRestate));
}

/** The commit measured, marked `+uncommitted` when machines/ or src/ differ from it; BENCH_COMMIT names it outside a checkout. */
function gitCommit(): string {
  if (process.env.BENCH_COMMIT) return process.env.BENCH_COMMIT;
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const changed = execFileSync('git', ['status', '--porcelain', '--', 'machines', 'src'], {
      encoding: 'utf8',
    }).trim();
    return changed ? `${commit}+uncommitted` : commit;
  } catch {
    return 'unknown';
  }
}

/** The peer libraries: installed versions, and the check that each validates tool arguments (bench/README.md). */
async function peersInfo(): Promise<PeersInfo> {
  const version = (name: string) => {
    const manifest = readFileSync(here(`../node_modules/${name}/package.json`), 'utf8');
    return `${name} ${(JSON.parse(manifest) as { version: string }).version}`;
  };
  const validation = await validationCheck();
  const unchecked = Object.entries(validation).filter(([, rejected]) => !rejected);
  if (unchecked.length > 0) {
    const names = unchecked.map(([name]) => name).join(', ');
    throw new Error(`bench: ${names} did not reject tool calls with invalid arguments`);
  }
  return { versions: { pi: version('@mariozechner/pi-agent-core'), aiSdk: version('ai') }, validation };
}
