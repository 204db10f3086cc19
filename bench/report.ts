import type { DurableRatio } from './durable-ratio.js';
import type { LoadScenario } from './load-scenario.js';
import type { LongSessionResult } from './long-session.js';
import type { MemoryResults } from './memory.js';
import type { OtelCost } from './otel.js';
import type { RelayResult } from './relay.js';
import { renderPeerSections, type PeersResults } from './report-peers.js';
import { renderRound3 } from './report-round3.js';
import type { StreamingResult } from './streaming.js';
import type { SessionsResult } from './sessions.js';
import type { StepRecordCost } from './step-records.js';
import type { StoreLatency, StoresResult } from './stores.js';
import type { DurableCost } from './durable.js';
import type { StudioCost } from './studio.js';
import type { Sampled } from './stats.js';
import type { Comparison, HistoryGrowth, InspectionCost } from './throughput.js';
import type { FloorResult } from './xstate-floor.js';

/** The JSON written beside results.md, and its Markdown rendering. */

export interface BenchResults {
  generatedAt: string;
  quick: boolean;
  environment: {
    node: string;
    cpus: number;
    cpuModel: string;
    commit: string;
    /** Where agentchart was loaded from: its build (dist/, as published, like the peers) or its sources through tsx. */
    agentchartFrom?: 'dist' | 'src';
    loadBefore: Record<string, number>;
    loadAfter: Record<string, number>;
    /** The 1-minute load average sampled every few seconds during the run. */
    loadDuring?: { samples: number; min: number; median: number; max: number };
    durationSeconds: number;
    peakRssMB: number;
    /** Highest RSS sampled during each step (MB). */
    peakRssMBByStep: Record<string, number>;
  };
  parity: { ok: boolean; agentchart: number; hand: number; firstDifference: number };
  perTurn: Comparison;
  perTool: Comparison;
  batch: Record<string, Comparison>;
  history: HistoryGrowth;
  sessions: SessionsResult;
  /** One long session on SQLite with the defaults, and one without a store or replay buffer (pure growth). */
  longSessions: { sqlite: LongSessionResult; noReplay: LongSessionResult };
  /** commitStep latency of the durable stores. */
  stores: StoresResult;
  /** A run's cost per turn and per step on the memory store and on SQLite (absent in results before it existed). */
  durable?: DurableCost[];
  relay: RelayResult;
  inspection: { perTurn: InspectionCost; perTool: InspectionCost };
  /** XState's own cost under a turn of our charts (bench/xstate-floor.ts). */
  floor?: FloorResult;
  /** Streamed text deltas consumed live, against pi and the AI SDK. */
  streaming: StreamingResult;
  /** `sqliteStore` against the same agent in memory. */
  durableRatio: { perTurn: DurableRatio; perTool: DurableRatio };
  /** Idle agents and the heap of a long session, in processes of their own. */
  memory: MemoryResults;
  /** Many sessions at once, against pi, in processes of their own. */
  load: LoadScenario;
  /** Absent in results written before the OpenTelemetry observer existed. */
  otel?: { perTurn: OtelCost; perTool: OtelCost };
  agentCreationUs: Sampled;
  /** Absent in results written before the studio existed: a run with the studio attached (and watched) against none. */
  studio?: StudioCost;
  /** What the per-step records (time travel, fork) add to a stored session. */
  stepRecords?: StepRecordCost;
  /** pi's agent core and the AI SDK: versions, validation, short sessions (other timings: perTurn, perTool, batch). */
  peers: PeersResults;
}

export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
  /** The same check on process CPU time, where it applies. */
  metOnCpu: boolean | null;
}

const fmt = (value: number, digits = 1) =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** The issue's targets, each checked against agentchart's median (wall clock, and CPU time where it applies). */
export function targetChecks(r: BenchResults): TargetCheck[] {
  const turn = r.perTurn.agentchart.median;
  const turnCpu = r.perTurn.cpu.agentchart.median;
  const k20 = r.perTool.agentchart.median;
  const k20Cpu = r.perTool.cpu.agentchart.median;
  const k1000 = r.batch['1000']?.agentchart.median ?? Number.NaN;
  const k1000Cpu = r.batch['1000']?.cpu.agentchart.median ?? Number.NaN;
  const scaledMB = (r.sessions.totalLiveMB.agentchart * 10_000) / r.sessions.sessions;
  const relay = r.relay.updatesPerSecond.agentchart.median;
  const relayCpu = r.relay.updatesPerCpuSecond.agentchart.median;
  const cpu = (value: number, digits = 1) => ` (CPU ${fmt(value, digits)})`;
  return [
    {
      target: 'per turn (T=200 × K=1) ≤ 75 µs',
      measured: `${fmt(turn)} µs${cpu(turnCpu)}`,
      met: turn <= 75,
      metOnCpu: turnCpu <= 75,
    },
    {
      target: 'per tool call at K=20 (T=50 × K=20) ≤ 35 µs',
      measured: `${fmt(k20)} µs${cpu(k20Cpu)}`,
      met: k20 <= 35,
      metOnCpu: k20Cpu <= 35,
    },
    {
      target: 'per tool call at K=1,000 ≤ 2 × the K=20 figure',
      measured: `${fmt(k1000)} µs = ${fmt(k1000 / k20, 2)} ×${cpu(k1000Cpu / k20Cpu, 2)} ×`,
      met: k1000 <= 2 * k20,
      metOnCpu: k1000Cpu <= 2 * k20Cpu,
    },
    {
      target: 'last-100 / first-100 turns (2,000 turns) ≤ 1.1 ×',
      measured: `${fmt(r.history.ratio.agentchart, 2)} ×${cpu(r.history.cpuRatio.agentchart, 2)} ×`,
      met: r.history.ratio.agentchart <= 1.1,
      metOnCpu: r.history.cpuRatio.agentchart <= 1.1,
    },
    {
      target: '10,000 idle sessions ≤ 300 MB',
      measured: `${fmt(scaledMB)} MB${r.sessions.sessions === 10_000 ? '' : ` (scaled from ${r.sessions.sessions})`}`,
      met: scaledMB <= 300,
      metOnCpu: null,
    },
    {
      target: 'relay ≥ 500,000 updates/s, none dropped',
      measured: `${fmt(relay, 0)} /s${cpu(relayCpu, 0)}, ${r.relay.dropped} dropped`,
      met: relay >= 500_000 && r.relay.dropped === 0,
      metOnCpu: relayCpu >= 500_000 && r.relay.dropped === 0,
    },
    ...longSessionChecks(r.longSessions.sqlite),
    storeCheck(r.stores.sqlite, 300),
    storeCheck(r.stores.postgres, 3_000),
    ...studioChecks(r.studio),
  ];
}

function studioChecks(studio: StudioCost | undefined): TargetCheck[] {
  if (!studio) return [];
  const { ratio, cpuRatio } = studio;
  // The target is what slows the agent: its thread's time on a CPU per turn (the page's own process is not in it).
  const checks: TargetCheck[] = [
    {
      target: "a run with the studio attached and a page watching: the agent's CPU ≤ 1.1 × per turn",
      measured:
        `CPU ${fmt(cpuRatio.watched, 2)} ×${cpuSpread(studio, 'watched')} (attached, no page: CPU ${fmt(cpuRatio.attached, 2)} ×${cpuSpread(studio, 'attached')}); ` +
        `wall ${fmt(ratio.watched, 2)} ×${processShare(studio, 'watched')}${flushShare(studio, 'watched')}`,
      met: cpuRatio.watched <= 1.1,
      metOnCpu: cpuRatio.watched <= 1.1,
    },
  ];
  // Results written before the stalled page was measured have no such mode.
  if (ratio.stalled !== undefined && cpuRatio.stalled !== undefined)
    checks.push({
      target: "a page that stopped reading (a paused tab) does not slow the run: the agent's CPU ≤ 1.1 × per turn",
      measured: `CPU ${fmt(cpuRatio.stalled, 2)} ×${cpuSpread(studio, 'stalled')}; wall ${fmt(ratio.stalled, 2)} ×${processShare(studio, 'stalled')}${flushShare(studio, 'stalled')} (${stalledHeld(studio)})`,
      met: cpuRatio.stalled <= 1.1,
      metOnCpu: cpuRatio.stalled <= 1.1,
    });
  return checks;
}

/** All the process's threads beside the agent's (the collector's helpers too; results before it have none). */
function processShare(studio: StudioCost, mode: 'watched' | 'stalled'): string {
  return studio.processCpu ? `; all the process's threads ${fmt(studio.processCpu.ratio[mode], 2)} ×` : '';
}

/**
 * The time the studio's own work took on the agent's thread, as a share of a turn's CPU with no
 * studio, and against the rest of the same run (results before them have neither).
 */
function flushShare(studio: StudioCost, mode: 'watched' | 'stalled'): string {
  const flush = studio.flushCpu;
  if (!flush) return '';
  const own = flush.ownShare?.[mode];
  return (
    `; the studio's own work ${fmt(flush[mode].median, 1)} µs per turn, ${fmt(flush.share[mode] * 100, 1)} % of a turn's CPU` +
    (own
      ? `, ${fmt(own.median * 100, 1)} % against the rest of its own run (90% interval ${fmt(own.low * 100, 1)}–${fmt(own.high * 100, 1)} %)`
      : '')
  );
}

/** The ratio's 90% interval over the rounds, and the A/A control's (results before they were kept have none). */
function cpuSpread(studio: StudioCost, mode: 'attached' | 'watched' | 'stalled'): string {
  const interval = studio.cpuRatioInterval?.[mode];
  const control = studio.control;
  if (!interval) return '';
  return (
    ` (90% interval ${fmt(interval.low, 2)}–${fmt(interval.high, 2)}, ${studio.rounds} rounds` +
    (control && mode !== 'attached'
      ? `; no studio against no studio: ${fmt(control.cpuRatio, 2)} ×, ${fmt(control.low, 2)}–${fmt(control.high, 2)})`
      : ')')
  );
}

/** The studio's own work on the agent's thread, against the rest of each run (results before it have none). */
function ownWorkRow(studio: StudioCost): string[] {
  const flush = studio.flushCpu;
  const own = flush?.ownShare;
  if (!flush || !own) return [];
  const cell = (mode: 'watched' | 'stalled') =>
    `${fmt(flush[mode].median)} (${fmt(own[mode].median * 100, 1)} % of the rest of its run, ` +
    `${fmt(own[mode].low * 100, 1)}–${fmt(own[mode].high * 100, 1)} %)`;
  return [
    `| | the studio's own work (its flushes and socket writes) | | | ${cell('watched')} | ${cell('stalled')} | |`,
  ];
}

/** What the paused page cost the studio: nothing held when the sockets' kernel buffers took the whole run. */
function stalledHeld(studio: StudioCost): string {
  const dropped = studio.stalledDropped ?? 0;
  const held = studio.stalledPeakBuffered ?? 0;
  if (dropped === 0 && held === 0) return 'the kernel took all the run sent it: nothing held, nothing dropped';
  return `${fmt(dropped, 0)} messages dropped per run, at most ${fmt(held / 2 ** 20, 2)} MB held for it`;
}

/** The studio's cost per turn, and what the per-step records add to a stored session. */
function studioSection(r: BenchResults): string[] {
  const lines: string[] = [];
  if (r.studio) {
    const s = r.studio;
    lines.push(
      '## The studio attached (agentchart/studio)',
      '',
      'No studio; the studio attached with no page open; the studio attached with a page reading the stream',
      '(a reader in a process of its own that drops what it reads); and with a page that stopped reading',
      "after its first bytes (a paused tab). The agent's thread's time on a CPU per turn (the scheduler's own",
      "count: the kernel's CPU clocks here are sampled at a 4 ms tick, as coarse as what is measured), from the",
      "run's start until the studio has sent its last events (a flush after the run is its cost too), after a",
      "full collection; modes interleaved round by round. All the agent process's threads, and wall clock, below it.",
      '',
      '| workload | | off (µs/turn) | attached | attached and watched | a paused page | bytes the page got per run |',
      '|---|---|---|---|---|---|---|',
      `| ${s.workload} | agent CPU | ${fmt(s.cpu.off.median)} | ${fmt(s.cpu.attached.median)} (${fmt(s.cpuRatio.attached, 2)} ×) | ` +
        `${fmt(s.cpu.watched.median)} (${fmt(s.cpuRatio.watched, 2)} ×) | ` +
        `${s.cpu.stalled ? `${fmt(s.cpu.stalled.median)} (${fmt(s.cpuRatio.stalled ?? 0, 2)} ×)` : '—'} | ${s.bytesPerRun.toLocaleString('en-US')} |`,
      ...(s.processCpu
        ? [
            `| | all threads | ${fmt(s.processCpu.median.off)} | ${fmt(s.processCpu.median.attached)} (${fmt(s.processCpu.ratio.attached, 2)} ×) | ` +
              `${fmt(s.processCpu.median.watched)} (${fmt(s.processCpu.ratio.watched, 2)} ×) | ` +
              `${fmt(s.processCpu.median.stalled)} (${fmt(s.processCpu.ratio.stalled, 2)} ×) | |`,
          ]
        : []),
      `| | wall | ${fmt(s.modes.off.median)} | ${fmt(s.modes.attached.median)} (${fmt(s.ratio.attached, 2)} ×) | ` +
        `${fmt(s.modes.watched.median)} (${fmt(s.ratio.watched, 2)} ×) | ` +
        `${s.modes.stalled ? `${fmt(s.modes.stalled.median)} (${fmt(s.ratio.stalled ?? 0, 2)} ×)` : '—'} | |`,
      ...ownWorkRow(s),
      '',
    );
  }
  if (r.stepRecords) {
    const p = r.stepRecords;
    lines.push(
      '## Per-step records (time travel and fork), on SQLite',
      '',
      `The ${p.steps} steps of a real 200-turn session: a record per step (${p.keyframes} keyframes, patches between them).`,
      '',
      '| records per step | events and messages per step | records / all stored | encoding per step | its insert per step | whole commitStep per step |',
      '|---|---|---|---|---|---|',
      `| ${fmt(p.recordBytesPerStep, 0)} B | ${fmt(p.sessionBytesPerStep, 0)} B | ${fmt(p.recordShare * 100, 0)} % | ${fmt(p.encodeUs)} µs | ${fmt(p.insertUs)} µs | ${fmt(p.commitUs)} µs |`,
      '',
    );
  }
  return lines;
}

function storeCheck(l: StoreLatency, targetUs: number): TargetCheck {
  const target = `commitStep p50 on ${l.store === 'sqlite' ? 'SQLite' : 'PostgreSQL'} ≤ ${fmt(targetUs / 1000, 1)} ms`;
  if (l.skipped) return { target, measured: `not measured: ${l.skipped}`, met: false, metOnCpu: null };
  return {
    target,
    measured: `${fmt(l.p50Us / 1000, 3)} ms (p99 ${fmt(l.p99Us / 1000, 2)} ms)`,
    met: l.p50Us <= targetUs,
    metOnCpu: null,
  };
}

function storeRow(l: StoreLatency): string {
  const name =
    l.store === 'sqlite' ? 'SQLite (WAL, synchronous=NORMAL, temp dir)' : 'PostgreSQL (defaults: fsync on, loopback)';
  return l.skipped
    ? `| ${name} | — | — | — | not measured: ${l.skipped} |`
    : `| ${name} | ${fmt(l.p50Us)} | ${fmt(l.p99Us)} | ${fmt(l.meanUs)} | ${l.steps.toLocaleString('en-US')} |`;
}

function longSessionChecks(l: LongSessionResult): TargetCheck[] {
  const worstHeap = Math.max(...l.points.map((p) => p.heapOverHistory));
  const worstFile = Math.max(...l.points.map((p) => p.fileOverHistoryJson));
  const turns = l.points.map((p) => p.turns.toLocaleString('en-US')).join(', ');
  return [
    {
      target: `long session: heap ≤ 3 × the history (at ${turns} turns)`,
      measured: l.points.map((p) => `${fmt(p.heapOverHistory, 2)} ×`).join(', '),
      met: worstHeap <= 3,
      metOnCpu: null,
    },
    {
      target: `long session: heap grows linearly (${fmt(l.turnsRatio, 0)} × the turns: near ${fmt(l.turnsRatio, 0)} ×, not ${fmt(l.turnsRatio ** 2, 0)} ×)`,
      measured: `${fmt(l.heapRatio, 2)} × (growth ${fmt(l.heapGrowthOverHistory, 2)} × the history's)`,
      met: l.heapRatio <= l.turnsRatio * 1.15,
      metOnCpu: null,
    },
    {
      target: `long session: SQLite database ≤ 10 × the history's JSON (at ${turns} turns)`,
      measured: l.points.map((p) => `${fmt(p.fileOverHistoryJson, 2)} ×`).join(', '),
      met: worstFile <= 10,
      metOnCpu: null,
    },
    {
      target: `long session: commitStep at the last ${l.window} turns / the first ${l.window} ≤ 1.2 ×`,
      measured: `${fmt(l.commitLastUs)} µs / ${fmt(l.commitFirstUs)} µs = ${fmt(l.commitRatio, 2)} ×`,
      met: l.commitRatio <= 1.2,
      metOnCpu: null,
    },
  ];
}

function longSessionRows(label: string, l: LongSessionResult): string[] {
  return l.points.map(
    (p) =>
      `| ${label} | ${p.turns.toLocaleString('en-US')} | ${fmt(p.heapMB, 2)} | ${fmt(p.historyHeapMB, 2)} | ${fmt(p.heapOverHistory, 2)} × | ${fmt(p.historyJsonMB, 2)} | ${l.store === 'sqlite' ? `${fmt(p.fileMB, 2)} (WAL ${fmt(p.walMB, 2)}) | ${fmt(p.fileOverHistoryJson, 2)} ×` : '— | —'} |`,
  );
}

const yesNo = (met: boolean) => (met ? 'yes' : '**no**');

function comparisonRow(label: string, c: Comparison): string {
  return `| ${label} | ${fmt(c.agentchart.median)} | ${fmt(c.hand.median)} | ${fmt(c.ratio, 2)} × | ${fmt(c.overhead)} | ${fmt(c.cpu.agentchart.median)} / ${fmt(c.cpu.hand.median)} | ${fmt(c.agentchart.min)}–${fmt(c.agentchart.max)} (${c.agentchart.samples.length}) |`;
}

export function renderMarkdown(r: BenchResults): string {
  const env = r.environment;
  const s = r.sessions;
  const h = r.history;
  const lines = [
    '# agentchart benchmarks',
    '',
    `Generated by \`npm run bench\`${r.quick ? ' --quick (smoke run: fewer rounds, smaller sizes)' : ''} on ${r.generatedAt} — commit ${env.commit}, Node ${env.node}, ${env.cpus} × ${env.cpuModel}.`,
    `agentchart ran ${env.agentchartFrom === 'src' ? 'from its TypeScript sources through tsx (not its build: tsx wraps every closure in a name-keeping helper the build has not)' : 'as built by `npm run build` (dist/, plain tsc output), like the peers run their published JavaScript'}.`,
    `Took ${env.durationSeconds} s. Peak RSS ${fmt(env.peakRssMB)} MB. Load average (1/5/15 min) ${env.loadBefore['1m']}/${env.loadBefore['5m']}/${env.loadBefore['15m']} before, ${env.loadAfter['1m']}/${env.loadAfter['5m']}/${env.loadAfter['15m']} after` +
      (env.loadDuring
        ? `; during the run (1 min, ${env.loadDuring.samples} samples) min ${fmt(env.loadDuring.min, 2)}, median ${fmt(env.loadDuring.median, 2)}, max ${fmt(env.loadDuring.max, 2)} on ${env.cpus} cores.`
        : '.'),
    'The machine is shared: a load above the core count stretches wall-clock figures (a process waits for a core), so every figure is a median over interleaved rounds' +
      ' (the implementations take turns going first, in balanced orders) and ratios measured in the same rounds are what to read.',
    '',
    'Workload: `scriptedModel` (no delays, `recordRequests: false`), instant tools (synchronous `execute`). The hand loop',
    '(bench/hand-loop.ts) does the same bookkeeping with no statechart: the same events with runId/seq in a replayable log,',
    'counters, stream accumulator and argument validation; tools run with `Promise.all`. ' +
      `Parity check: both publish the same ${r.parity.agentchart} event types in the same order for a 3-turn × 2-tool session: ${r.parity.ok ? 'yes' : 'NO'}.`,
    '',
    ...renderRound3(r),
    '## Earlier targets (agentchart medians)',
    '',
    '| target | measured | met | met on CPU time |',
    '|---|---|---|---|',
    ...targetChecks(r).map(
      (t) => `| ${t.target} | ${t.measured} | ${yesNo(t.met)} | ${t.metOnCpu === null ? '—' : yesNo(t.metOnCpu)} |`,
    ),
    '',
    ...renderPeerSections({ ...r, shortSession: r.peers.shortSession, longSession: r.history }, r.peers),
    '## agentchart against the hand loop',
    '',
    "Wall-clock medians. The CPU column is process CPU time per unit (agentchart / hand loop): time spent waiting for a core is not in it, but V8's GC helper threads are, so it can exceed the wall clock.",
    '',
    '| benchmark | agentchart | hand loop | ratio | overhead (µs) | CPU µs (agentchart / hand) | agentchart min–max (runs) |',
    '|---|---|---|---|---|---|---|',
    comparisonRow('per turn, T=200 × K=1 (µs/turn)', r.perTurn),
    comparisonRow('per tool call, T=50 × K=20 (µs/call)', r.perTool),
    ...Object.entries(r.batch).map(([k, c]) =>
      comparisonRow(`batch K=${Number(k).toLocaleString('en-US')}, one turn (µs/call)`, c),
    ),
    `| history, first 100 of ${h.turns.toLocaleString('en-US')} turns (µs/turn) | ${fmt(h.first100.agentchart.median)} | ${fmt(h.first100.hand.median)} | ${fmt(h.first100.agentchart.median / h.first100.hand.median, 2)} × | ${fmt(h.first100.agentchart.median - h.first100.hand.median)} | | ${fmt(h.first100.agentchart.min)}–${fmt(h.first100.agentchart.max)} (${h.first100.agentchart.samples.length}) |`,
    `| history, last 100 of ${h.turns.toLocaleString('en-US')} turns (µs/turn) | ${fmt(h.last100.agentchart.median)} | ${fmt(h.last100.hand.median)} | ${fmt(h.last100.agentchart.median / h.last100.hand.median, 2)} × | ${fmt(h.last100.agentchart.median - h.last100.hand.median)} | | ${fmt(h.last100.agentchart.min)}–${fmt(h.last100.agentchart.max)} (${h.last100.agentchart.samples.length}) |`,
    `| history growth, last-100 / first-100 | ${fmt(h.ratio.agentchart, 2)} × | ${fmt(h.ratio.hand, 2)} × | | | ${fmt(h.cpuRatio.agentchart, 2)} × / ${fmt(h.cpuRatio.hand, 2)} × | |`,
    `| ${s.sessions.toLocaleString('en-US')} idle sessions, live memory (KB/session) | ${fmt(s.liveKBPerSession.agentchart.median)} | ${fmt(s.liveKBPerSession.hand.median)} | ${fmt(s.liveKBPerSession.agentchart.median / s.liveKBPerSession.hand.median, 2)} × | | | ${fmt(s.liveKBPerSession.agentchart.min)}–${fmt(s.liveKBPerSession.agentchart.max)} (${s.liveKBPerSession.agentchart.samples.length}) |`,
    `| ${s.sessions.toLocaleString('en-US')} idle sessions, live memory (MB, all) | ${fmt(s.totalLiveMB.agentchart)} | ${fmt(s.totalLiveMB.hand)} | | | | |`,
    `| idle sessions, RSS growth (KB/session) | ${fmt(s.rssKBPerSession.agentchart.median)} | ${fmt(s.rssKBPerSession.hand.median)} | | | | |`,
    `| idle sessions, start until the model call is open (µs/session) | ${fmt(s.startUs.agentchart.median)} | ${fmt(s.startUs.hand.median)} | ${fmt(s.startUs.agentchart.median / s.startUs.hand.median, 2)} × | | | |`,
    `| idle sessions, abort until the result resolved (µs/session) | ${fmt(s.abortUs.agentchart.median)} | ${fmt(s.abortUs.hand.median)} | ${fmt(s.abortUs.agentchart.median / s.abortUs.hand.median, 2)} × | | | |`,
    `| idle sessions, memory still held after they ended (KB/session) | ${fmt(s.retainedKBPerSession.agentchart.median, 2)} | ${fmt(s.retainedKBPerSession.hand.median, 2)} | | | | |`,
    `| progress relay, ${r.relay.tools} tools × ${r.relay.updatesPerTool.toLocaleString('en-US')} updates (updates/s) | ${fmt(r.relay.updatesPerSecond.agentchart.median, 0)} | ${fmt(r.relay.updatesPerSecond.hand.median, 0)} | ${fmt(r.relay.ratio, 2)} × | | ${fmt(r.relay.updatesPerCpuSecond.agentchart.median, 0)} / ${fmt(r.relay.updatesPerCpuSecond.hand.median, 0)} per CPU s | ${fmt(r.relay.updatesPerSecond.agentchart.min, 0)}–${fmt(r.relay.updatesPerSecond.agentchart.max, 0)} (${r.relay.updatesPerSecond.agentchart.samples.length}) |`,
    '',
    `Sessions: every run of every round ended \`aborted\` (endReason aborted, agent no longer running): ${s.allAborted ? 'yes' : `**no** (${s.notAborted} did not)`}.`,
    `Relay: ${r.relay.dropped} updates dropped, ${r.relay.outOfOrder} out of order (each call's updates are checked to arrive as 0, 1, 2, …).`,
    '',
    '## Long sessions',
    '',
    'One session of file-reading turns (a short text, one tool call, a ~400-character result), measured while its run is alive:',
    "live heap after a full GC (after a warm-up session, so compiled code is not counted), the history's own heap (a structured",
    'clone of it, measured the same way), the SQLite database (its WAL, shown apart, is bounded scratch space of the whole file). Default options (`replayBuffer` 5,000 events), then with',
    'no store and `replayBuffer: 0`, which shows the growth that is left: the history itself.',
    '',
    '| run | turns | heap (MB) | history heap (MB) | heap / history | history JSON (MB) | SQLite database (MB) | database / history JSON |',
    '|---|---|---|---|---|---|---|---|',
    ...longSessionRows('SQLite, defaults', r.longSessions.sqlite),
    ...longSessionRows('no store, replayBuffer 0', r.longSessions.noReplay),
    '',
    `SQLite grows ${fmt(r.longSessions.sqlite.fileKBPerTurn, 2)} KB per turn (${fmt(r.longSessions.sqlite.fileGrowthOverHistoryJson, 2)} × the history's JSON growth); ` +
      `commitStep median ${fmt(r.longSessions.sqlite.commitFirstUs)} µs over the first ${r.longSessions.sqlite.window} turns, ${fmt(r.longSessions.sqlite.commitLastUs)} µs over the last ${r.longSessions.sqlite.window} ` +
      `(${fmt(r.longSessions.sqlite.commitRatio, 2)} ×). The ${r.longSessions.sqlite.points.at(-1)?.turns.toLocaleString('en-US')}-turn run took ${fmt(r.longSessions.sqlite.runMs / 1000)} s with the store, ${fmt(r.longSessions.noReplay.runMs / 1000)} s without.`,
    '',
    '## Stores: commitStep latency',
    '',
    'The steps of a real 200-turn session (recorded on the memory store) committed again one after another, each awaited.',
    '',
    '| store | p50 (µs) | p99 (µs) | mean (µs) | steps |',
    '|---|---|---|---|---|',
    storeRow(r.stores.sqlite),
    storeRow(r.stores.postgres),
    '',
    ...durableSection(r.durable),
    '## Inspection on vs off (agentchart, a no-op `inspect` observer)',
    '',
    '| workload | off (µs/turn) | on (µs/turn) | on / off | on / off (CPU) |',
    '|---|---|---|---|---|',
    ...[r.inspection.perTurn, r.inspection.perTool].map(
      (i: InspectionCost) =>
        `| ${i.workload} | ${fmt(i.off.median)} | ${fmt(i.on.median)} | ${fmt(i.ratio, 2)} × | ${fmt(i.cpuRatio, 2)} × |`,
    ),
    '',
    ...otelSection(r),
    ...studioSection(r),
    `\`createAgent\` itself: ${fmt(r.agentCreationUs.median)} µs per agent (not included in the figures above).`,
    '',
    '## Peak RSS by step (MB, sampled between rounds)',
    '',
    '| step | peak RSS |',
    '|---|---|',
    ...Object.entries(env.peakRssMBByStep).map(([name, mb]) => `| ${name} | ${fmt(mb)} |`),
    '',
  ];
  return `${lines.join('\n')}\n`;
}

/** The OpenTelemetry observer's cost: off, on with no SDK registered, on with the SDK recording. */
function otelSection(r: BenchResults): string[] {
  if (!r.otel) return [];
  const row = (o: OtelCost) =>
    `| ${o.workload} | ${fmt(o.modes.off.median)} | ${fmt(o.modes.noSdk.median)} (${fmt(o.ratio.noSdk, 2)} ×, CPU ${fmt(o.cpuRatio.noSdk, 2)} ×) | ` +
    `${fmt(o.modes.sdk.median)} (${fmt(o.ratio.sdk, 2)} ×, CPU ${fmt(o.cpuRatio.sdk, 2)} ×) | ${o.spansPerRun} | ` +
    `${fmt(o.noSdkNsPerEvent)} |`;
  return [
    '## OpenTelemetry observer (`otel: otelObserver()`)',
    '',
    "Off; on with no SDK registered (the API's no-op tracer: one non-recording span per run, nothing else);",
    'on with the SDK recording every span (SimpleSpanProcessor into an in-memory exporter).',
    '',
    '| workload | off (µs/turn) | on, no SDK | on, SDK recording | spans per run | no SDK: observer ns/event |',
    '|---|---|---|---|---|---|',
    row(r.otel.perTurn),
    row(r.otel.perTool),
    '',
  ];
}

/** A durable run's cost: each event stored before it is published, each step awaited. */
function durableSection(durable: DurableCost[] | undefined): string[] {
  if (!durable) return [];
  return [
    '## A durable run: cost per turn and per step',
    '',
    `${durable[0]?.turns ?? 0} turns × 1 instant tool call, a fresh session per round; every lifecycle event is stored before a subscriber gets it.`,
    '',
    '| store | steps per run | µs per turn | µs per step |',
    '|---|---|---|---|',
    ...durable.map((c) => `| ${c.store} | ${c.steps} | ${fmt(c.usPerTurn.median)} | ${fmt(c.usPerStep.median)} |`),
    '',
  ];
}
