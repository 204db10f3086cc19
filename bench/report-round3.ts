import type { BenchResults } from './report.js';
import { missedTargetProfiles, readProfiles } from './report-profiles.js';
import { aiSdkRows, roundTargets } from './report-targets.js';
import type { LoadRun } from './load.js';

/** The results.md sections of this round's targets: the checks, the comparison table, and each new workload. */

const fmt = (value: number, digits = 1) =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const times = (value: number) => `${fmt(value, 2)} ×`;
const verdict = (met: boolean | null) => (met === null ? '—' : met ? 'met' : '**missed**');
const n = (value: number) => value.toLocaleString('en-US');

export function renderRound3(r: BenchResults): string[] {
  const targets = roundTargets(r);
  return [
    '## Targets',
    '',
    'Each target against this run (agentchart medians; ratios between libraries measured in the same rounds).',
    'Verdicts on the wall clock and on process CPU time: on a loaded machine the CPU time is the fairer one (it does not count the time a process waits for a core).',
    '',
    '| target | threshold | measured | wall | CPU |',
    '|---|---|---|---|---|',
    ...targets.map(
      (t) => `| ${t.target} | ${t.threshold} | ${t.measured} | ${verdict(t.met)} | ${verdict(t.metOnCpu)} |`,
    ),
    '',
    ...missedTargetProfiles(targets, r.environment.commit, readProfiles()),
    ...comparisonTable(r),
    '### agentchart against the AI SDK, every configuration',
    '',
    ...aiSdkRows(r),
    '',
    ...streamingSection(r),
    ...loadSection(r),
    ...memorySection(r),
    ...durableSection(r),
    ...floorSection(r),
  ];
}

/** The libraries side by side on the rows: wall-clock medians, CPU in brackets. */
function comparisonTable(r: BenchResults): string[] {
  const cell = (wall: number, cpu: number, digits = 1) => `${fmt(wall, digits)} (${fmt(cpu, digits)})`;
  const k1000 = r.batch['1000'];
  const h = r.history.perTurn;
  const heap = r.memory.sessionHeap;
  const s = r.streaming;
  const row = (label: string, c: typeof r.perTurn) =>
    `| ${label} | ${cell(c.peers.pi.wall.median, c.peers.pi.cpu.median)} | ${cell(c.agentchart.median, c.cpu.agentchart.median)} | ${cell(c.peers.aiSdk.wall.median, c.peers.aiSdk.cpu.median)} | ${cell(c.peers.aiSdkGenerate.wall.median, c.peers.aiSdkGenerate.cpu.median)} | ${cell(c.hand.median, c.cpu.hand.median)} |`;
  return [
    '### The libraries side by side (wall-clock medians; CPU in brackets)',
    '',
    '| | pi | agentchart | AI SDK `streamText` | AI SDK `generateText` | hand loop |',
    '|---|---|---|---|---|---|',
    row('µs per turn, T=200 × K=1', r.perTurn),
    row('µs per tool call, T=50 × K=20', r.perTool),
    ...(k1000 ? [row('µs per tool call, K=1,000', k1000)] : []),
    row(`µs per turn, ${n(r.history.turns)}-turn session`, h),
    `| heap growth, ${n(heap.agentchart.turns)}-turn session (MB used, no GC / live after a full GC) | ${fmt(heap.pi.usedMB)} / ${fmt(heap.pi.liveMB, 2)} | ${fmt(heap.agentchart.usedMB)} / ${fmt(heap.agentchart.liveMB, 2)} | ${fmt(heap.aiSdk.usedMB)} / ${fmt(heap.aiSdk.liveMB, 2)} | ${fmt(heap.aiSdkGenerate.usedMB)} / ${fmt(heap.aiSdkGenerate.liveMB, 2)} | ${fmt(heap.hand.usedMB)} / ${fmt(heap.hand.liveMB, 2)} |`,
    `| µs per streamed text delta, T=${s.turns} × D=${s.deltasPerReply}, live | ${cell(s.wall.pi.median, s.cpu.pi.median, 2)} | ${cell(s.wall.agentchart.median, s.cpu.agentchart.median, 2)} | ${cell(s.wall.aiSdk.median, s.cpu.aiSdk.median, 2)} | ${cell(s.wall.aiSdkGenerate.median, s.cpu.aiSdkGenerate.median, 2)} (not streamed) | — |`,
    '',
  ];
}

function streamingSection(r: BenchResults): string[] {
  const s = r.streaming;
  return [
    '## Streamed text, consumed live',
    '',
    `${s.turns} turns whose replies stream ${s.deltasPerReply} text deltas then ask for one instant tool call, and a last reply of ${s.deltasPerReply} deltas: ${n(s.deltas)} deltas per session.`,
    "A subscriber on each library's own event stream checks every delta as it arrives (same text, in order, none missing; a run that misses one fails the benchmark):",
    "agentchart with `streaming: 'live'` on the replay model (bench/replay-model.ts), pi through `agent.subscribe`, the AI SDK's `streamText` through `fullStream`;",
    '`generateText` cannot stream, so it gets the same text whole and is checked at the end. µs per delta is the whole session over its deltas (turns and tool calls included).',
    `Every run's deltas checked: ${s.checked ? 'yes' : '**no**'}; ${s.wall.agentchart.samples.length} rounds.`,
    '',
  ];
}

function loadRow(
  label: string,
  run: Pick<LoadRun, 'wallMs' | 'cpuMs' | 'peakRssMB' | 'peakHeapMB' | 'heapAfterMB'>,
): string {
  return `| ${label} | ${fmt(run.wallMs / 1000, 2)} | ${fmt(run.cpuMs / 1000, 2)} | ${fmt(run.peakRssMB, 0)} | ${fmt(run.peakHeapMB, 0)} | ${fmt(run.heapAfterMB)} |`;
}

function loadSection(r: BenchResults): string[] {
  const l = r.load;
  const first = l.sizes[0];
  const sizes = l.sizes.flatMap((size) => [
    loadRow(`${n(size.sessions)} sessions: agentchart`, size.agentchart),
    loadRow(`${n(size.sessions)} sessions: pi`, size.pi),
    `| ${n(size.sessions)} sessions: agentchart / pi | ${times(size.wallRatio)} | ${times(size.cpuRatio)} | ${times(size.rssRatio)} | | |`,
  ]);
  const scripted = l.scripted;
  return [
    '## Load: many sessions at once in one process',
    '',
    first
      ? `Each session: ${first.turns} turns of ${first.tools} tool calls whose bodies wait 1–5 ms on a timer, then an answer; a subscriber counts every event.` +
        ' Both libraries replay ready-made events (bench/replay-model.ts, bench/pi-driver.ts); each run is a process of its own (bench/load.ts),' +
        ' so the peak RSS is the kernel’s high-water mark of that run. Every session of every run completed (checked: turns and executed calls).' +
        ` Medians of ${first.agentchart.runs.length} run(s) per size; the heap after is read once every session ended and was dropped (full GC).`
      : 'Not run.',
    '',
    '| run | wall (s) | CPU (s) | peak RSS (MB) | peak heap (MB) | heap after (MB) |',
    '|---|---|---|---|---|---|',
    ...sizes,
    ...(scripted
      ? [
          loadRow(
            `${n(scripted.sessions)} sessions: agentchart on \`scriptedModel\` (every request recorded, its default)`,
            scripted,
          ),
        ]
      : []),
    '',
    ...(scripted && first
      ? [
          `\`scriptedModel\` records a deep copy of every request by default (\`recordRequests: true\`), which is quadratic in a session's length: ` +
            `at ${n(scripted.sessions)} sessions it took ${fmt(scripted.wallMs / 1000, 1)} s and a peak RSS of ${fmt(scripted.peakRssMB, 0)} MB ` +
            `against ${fmt((l.sizes.find((s) => s.sessions === scripted.sessions)?.agentchart.wallMs ?? Number.NaN) / 1000, 1)} s and ` +
            `${fmt(l.sizes.find((s) => s.sessions === scripted.sessions)?.agentchart.peakRssMB ?? Number.NaN, 0)} MB on the replay model. Load tests should pass \`recordRequests: false\`.`,
          '',
        ]
      : []),
  ];
}

function memorySection(r: BenchResults): string[] {
  const { idle, sessionHeap } = r.memory;
  const heapRow = (label: string, h: (typeof sessionHeap)['pi']) =>
    `| ${label} | ${fmt(h.usedMB)} | ${fmt(h.liveMB, 2)} | ${fmt(h.retainedMB, 2)} |`;
  return [
    '## Memory',
    '',
    `Idle agents: ${n(idle.agentchart.agents)} agents created and kept, none running, each with its own model and tools (bench/idle-agents.ts, a process of its own).`,
    '',
    '| library | live heap (MB) | KB per agent | RSS growth (MB) | µs to create one |',
    '|---|---|---|---|---|',
    ...(['agentchart', 'pi'] as const).map(
      (library) =>
        `| ${library} | ${fmt(idle[library].heapMB)} | ${fmt(idle[library].heapKBPerAgent, 2)} | ${fmt(idle[library].rssMB)} | ${fmt(idle[library].createUs)} |`,
    ),
    '',
    `A ${n(sessionHeap.agentchart.turns)}-turn session (K=1), a process per library and run (bench/session-heap.ts; medians of ${sessionHeap.agentchart.runs.length}):`,
    'the heap used right after it with no GC (garbage included: what the allocation rate leaves behind), the live memory as its last model call starts (full GC),',
    "and what the finished session holds while its caller keeps its natural references (the agent, the run and its result; pi's agent; the AI SDK's result).",
    '',
    '| library | heap used, no GC (MB) | live while running (MB) | held once ended (MB) |',
    '|---|---|---|---|',
    heapRow('agentchart', sessionHeap.agentchart),
    heapRow('pi', sessionHeap.pi),
    heapRow('AI SDK `streamText`', sessionHeap.aiSdk),
    heapRow('AI SDK `generateText`', sessionHeap.aiSdkGenerate),
    heapRow('hand loop', sessionHeap.hand),
    '',
  ];
}

function durableSection(r: BenchResults): string[] {
  const row = (d: BenchResults['durableRatio']['perTurn']) =>
    `| ${d.workload} (${d.unit}) | ${fmt(d.wall.memory.median)} | ${fmt(d.wall.sqlite.median)} | ${times(d.ratio)} (paired ${times(d.pairedRatio)}) | ${fmt(d.cpu.memory.median)} / ${fmt(d.cpu.sqlite.median)} (${times(d.cpuRatio)}) | ${fmt(d.fileKB, 0)} (WAL ${fmt(d.walKB, 0)}) |`;
  return [
    '## Durable sessions (`sqliteStore`)',
    '',
    'The same agent and workload with a new SQLite database per run (temp dir; opening it and `ready` untimed) against no store, alternating.',
    '',
    '| workload | in memory | SQLite | SQLite / memory | CPU memory / SQLite | database after one session (KB) |',
    '|---|---|---|---|---|---|',
    row(r.durableRatio.perTurn),
    row(r.durableRatio.perTool),
    '',
  ];
}

/** The least XState work a turn of our charts does, timed with no-op effects, beside pi and agentchart. */
function floorSection(r: BenchResults): string[] {
  const f = r.floor;
  if (!f) return [];
  const row = (name: string, figure: { wallUs: number; cpuUs: number }, pi = true) =>
    `| ${name} | ${fmt(figure.wallUs, 2)} | ${fmt(figure.cpuUs, 2)} | ${pi ? times(figure.cpuUs / f.piTurn.cpuUs) : ''} |`;
  const c = f.counts;
  const s = f.skeletonCounts;
  const countRow = (name: string, key: keyof typeof c) => `| ${name} | ${fmt(c[key], 2)} | ${fmt(s[key], 2)} |`;
  return [
    '## The XState floor (bench/xstate-floor.ts; bench/README.md says where the time goes)',
    '',
    'The skeleton turn is the least XState work a turn of our charts asks for, with every effect a no-op: the master invoking a turn machine, ' +
      'the turn invoking a promise actor for the model and starting one light tool-call actor, each output assigned. ' +
      `agentchart, the skeleton and pi ran in the same ${f.rounds} interleaved rounds (T=200 × K=1).`,
    '',
    "| per turn (T=200 × K=1), counted from the inspection stream and the charts' assigns | agentchart | skeleton |",
    '|---|---|---|',
    countRow('actors created', 'actors'),
    countRow('events delivered', 'events'),
    countRow('microsteps', 'microsteps'),
    countRow('custom actions executed', 'actions'),
    countRow('assigns (a context and snapshot copy each)', 'assigns'),
    '',
    '| measurement (same process, medians) | µs | CPU µs | CPU / pi per turn |',
    '|---|---|---|---|',
    row('skeleton turn: XState alone, per turn', f.skeletonTurn),
    row('a machine actor created, started, stopped', f.actor, false),
    row('one event: a transition with an assign', f.transition, false),
    row('pi agent core, per turn', f.piTurn),
    row('agentchart, per turn', f.agentchartTurn),
    '',
  ];
}
