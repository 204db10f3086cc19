import type { Comparison, PeerFigures } from './throughput.js';
import type { BenchResults } from './report.js';

/**
 * The speed targets of this round, each checked against this run's figures (ratios measured in
 * the same process, in interleaved rounds): the threshold, what was measured, met or missed — on
 * the wall clock and, where it applies, on process CPU time (fairer on a loaded machine).
 */

export interface RoundTarget {
  target: string;
  threshold: string;
  measured: string;
  met: boolean | null;
  metOnCpu: boolean | null;
  /** The section of bench/where-time-goes.md that profiles this target's workload. */
  profile?: string;
}

const fmt = (value: number, digits = 1) =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const times = (value: number) => `${fmt(value, 2)} ×`;

/** The configurations every library runs (the AI SDK targets apply to each). */
export function configurations(r: BenchResults): { label: string; comparison: Comparison }[] {
  return [
    { label: 'per turn, T=200 × K=1', comparison: r.perTurn },
    { label: 'per tool call, T=50 × K=20', comparison: r.perTool },
    ...Object.entries(r.batch).map(([k, c]) => ({
      label: `batch K=${Number(k).toLocaleString('en-US')}`,
      comparison: c,
    })),
    { label: 'short session, T=1 × K=1', comparison: r.peers.shortSession },
    { label: `${r.history.turns.toLocaleString('en-US')}-turn session`, comparison: r.history.perTurn },
  ];
}

/** agentchart / the AI SDK on every configuration, streaming included: the worst one decides. */
function aheadOfAiSdk(r: BenchResults, path: 'aiSdk' | 'aiSdkGenerate'): RoundTarget {
  const rows: { label: string; wall: number; cpu: number }[] = configurations(r).map(({ label, comparison }) => {
    const f: PeerFigures = comparison.peers[path];
    return { label, wall: f.ratio, cpu: f.cpuRatio };
  });
  const s = r.streaming.ratios[path];
  rows.push({ label: 'streamed deltas', wall: s.wall, cpu: s.cpu });
  const worst = rows.reduce((a, b) => (b.wall > a.wall ? b : a));
  const worstCpu = rows.reduce((a, b) => (b.cpu > a.cpu ? b : a));
  const name = path === 'aiSdk' ? '`streamText`' : '`generateText`';
  return {
    target: `≥ 2 × faster than the AI SDK's ${name} on every configuration (${rows.length}; table below)`,
    threshold: 'agentchart / AI SDK ≤ 0.5 × on each',
    measured: `worst: ${worst.label} ${times(worst.wall)} (CPU: ${worstCpu.label} ${times(worstCpu.cpu)})`,
    met: rows.every((row) => row.wall <= 0.5),
    metOnCpu: rows.every((row) => row.cpu <= 0.5),
    profile: path === 'aiSdk' ? 'ai-sdk-stream' : 'ai-sdk-generate',
  };
}

export function roundTargets(r: BenchResults): RoundTarget[] {
  const floor = r.floor;
  const k20 = r.perTool;
  const k1000 = r.batch['1000'];
  const heap = r.memory.sessionHeap;
  const idle = r.memory.idle.agentchart;
  const idleMB = (idle.heapMB * 10_000) / idle.agents;
  const big = r.load.sizes.find((size) => size.sessions === 10_000);
  const notRun = (what: string): Pick<RoundTarget, 'measured' | 'met' | 'metOnCpu'> => ({
    measured: `not measured (${what})`,
    met: null,
    metOnCpu: null,
  });
  const targets: RoundTarget[] = [
    {
      target: 'µs per turn (T=200 × K=1) against the XState-floor skeleton, same rounds',
      threshold: '≤ 1.5 × the skeleton',
      ...(floor
        ? {
            measured:
              `${fmt(floor.agentchartTurn.wallUs)} / ${fmt(floor.skeletonTurn.wallUs)} µs = ${times(floor.overSkeleton.wall)}` +
              ` (paired ${times(floor.overSkeleton.paired)}, CPU ${times(floor.overSkeleton.cpu)})`,
            met: floor.overSkeleton.wall <= 1.5,
            metOnCpu: floor.overSkeleton.cpu <= 1.5,
          }
        : notRun('no floor step')),
      profile: 'turn-vs-floor',
    },
    {
      target: 'µs per tool call at K=20 (T=50 × K=20) against pi',
      threshold: '≤ 1.5 × pi',
      measured:
        `${fmt(k20.agentchart.median)} / ${fmt(k20.peers.pi.wall.median)} µs = ${times(k20.peers.pi.ratio)}` +
        ` (paired ${times(k20.peers.pi.pairedRatio)}, CPU ${times(k20.peers.pi.cpuRatio)})`,
      met: k20.peers.pi.ratio <= 1.5,
      metOnCpu: k20.peers.pi.cpuRatio <= 1.5,
      profile: 'tool-call-k20',
    },
    {
      target: 'µs per tool call at K=1,000 against K=20',
      threshold: '≤ 1 × the K=20 figure',
      ...(k1000
        ? {
            measured:
              `${fmt(k1000.agentchart.median)} / ${fmt(k20.agentchart.median)} µs = ${times(k1000.agentchart.median / k20.agentchart.median)}` +
              ` (CPU ${times(k1000.cpu.agentchart.median / k20.cpu.agentchart.median)})`,
            met: k1000.agentchart.median <= k20.agentchart.median,
            metOnCpu: k1000.cpu.agentchart.median <= k20.cpu.agentchart.median,
          }
        : notRun('no K=1,000 batch')),
    },
    {
      target: `µs per streamed text delta (T=${r.streaming.turns}, D=${r.streaming.deltasPerReply} per reply, live subscriber) against pi`,
      threshold: '≤ 1 × pi',
      measured:
        `${fmt(r.streaming.wall.agentchart.median, 2)} / ${fmt(r.streaming.wall.pi.median, 2)} µs = ${times(r.streaming.ratios.pi.wall)}` +
        ` (paired ${times(r.streaming.ratios.pi.paired)}, CPU ${times(r.streaming.ratios.pi.cpu)}); every delta seen live: ${r.streaming.checked ? 'yes' : 'no'}`,
      met: r.streaming.ratios.pi.wall <= 1 && r.streaming.checked,
      metOnCpu: r.streaming.ratios.pi.cpu <= 1 && r.streaming.checked,
      profile: 'streamed-delta',
    },
    aheadOfAiSdk(r, 'aiSdk'),
    aheadOfAiSdk(r, 'aiSdkGenerate'),
    {
      target: `heap growth of a ${heap.agentchart.turns.toLocaleString('en-US')}-turn session against pi (heap used after it, no GC)`,
      threshold: '≤ 2 × pi',
      measured:
        `${fmt(heap.agentchart.usedMB)} / ${fmt(heap.pi.usedMB)} MB = ${times(heap.agentchart.usedMB / heap.pi.usedMB)}` +
        `; live (full GC) ${fmt(heap.agentchart.liveMB, 2)} / ${fmt(heap.pi.liveMB, 2)} MB = ${times(heap.agentchart.liveMB / heap.pi.liveMB)}`,
      met: heap.agentchart.usedMB <= 2 * heap.pi.usedMB,
      metOnCpu: null,
      profile: 'heap-growth',
    },
    {
      target: '10,000 idle agents (created, not running): live heap',
      threshold: '≤ 150 MB',
      measured:
        `${fmt(idleMB)} MB${idle.agents === 10_000 ? '' : ` (scaled from ${idle.agents.toLocaleString('en-US')})`}` +
        ` (${fmt(idle.heapKBPerAgent, 2)} KB each; RSS +${fmt(idle.rssMB)} MB; pi ${fmt(r.memory.idle.pi.heapMB)} MB)`,
      met: idleMB <= 150,
      metOnCpu: null,
    },
    {
      target: '10,000 concurrently active sessions: peak RSS',
      threshold: '≤ 2 GB',
      ...(big
        ? {
            measured: `${fmt(big.agentchart.peakRssMB, 0)} MB (pi ${fmt(big.pi.peakRssMB, 0)} MB, ${times(big.rssRatio)})`,
            met: big.agentchart.peakRssMB <= 2048,
            metOnCpu: null,
          }
        : notRun('10,000 sessions are not run with --quick')),
    },
    {
      target: '10,000 concurrently active sessions: wall time against pi',
      threshold: '≤ 2 × pi',
      ...(big
        ? {
            measured:
              `${fmt(big.agentchart.wallMs / 1000)} / ${fmt(big.pi.wallMs / 1000)} s = ${times(big.wallRatio)}` +
              ` (CPU ${fmt(big.agentchart.cpuMs / 1000)} / ${fmt(big.pi.cpuMs / 1000)} s = ${times(big.cpuRatio)})`,
            met: big.wallRatio <= 2,
            metOnCpu: big.cpuRatio <= 2,
          }
        : notRun('10,000 sessions are not run with --quick')),
      profile: 'active-sessions-wall',
    },
  ];
  for (const [label, d, profile] of [
    ['µs per turn (T=200 × K=1)', r.durableRatio.perTurn, 'durable-turn'],
    ['µs per tool call (T=50 × K=20)', r.durableRatio.perTool, 'durable-tool'],
  ] as const) {
    targets.push({
      target: `durable sessions (\`sqliteStore\`): ${label} against the same agent in memory`,
      threshold: '≤ 2 × in memory',
      measured:
        `${fmt(d.wall.sqlite.median)} / ${fmt(d.wall.memory.median)} µs = ${times(d.ratio)}` +
        ` (paired ${times(d.pairedRatio)}, CPU ${times(d.cpuRatio)})`,
      met: d.ratio <= 2,
      metOnCpu: d.cpuRatio <= 2,
      profile,
    });
  }
  return targets;
}

/** The AI SDK ratios on every configuration (the detail behind the two AI SDK targets). */
export function aiSdkRows(r: BenchResults): string[] {
  const cell = (wall: number, cpu: number) => `${times(wall)} (CPU ${times(cpu)})${wall <= 0.5 ? '' : ' **over**'}`;
  const rows = configurations(r).map(({ label, comparison: c }) => {
    const s = c.peers.aiSdk;
    const g = c.peers.aiSdkGenerate;
    return `| ${label} | ${fmt(c.agentchart.median)} | ${fmt(s.wall.median)} | ${cell(s.ratio, s.cpuRatio)} | ${fmt(g.wall.median)} | ${cell(g.ratio, g.cpuRatio)} |`;
  });
  const st = r.streaming;
  rows.push(
    `| streamed deltas, T=${st.turns} × D=${st.deltasPerReply} (µs/delta) | ${fmt(st.wall.agentchart.median, 2)} | ${fmt(st.wall.aiSdk.median, 2)} | ${cell(st.ratios.aiSdk.wall, st.ratios.aiSdk.cpu)} | ${fmt(st.wall.aiSdkGenerate.median, 2)} (not streamed) | ${cell(st.ratios.aiSdkGenerate.wall, st.ratios.aiSdkGenerate.cpu)} |`,
  );
  return [
    '| configuration (µs per unit, wall) | agentchart | `streamText` | agentchart / `streamText` | `generateText` | agentchart / `generateText` |',
    '|---|---|---|---|---|---|',
    ...rows,
  ];
}
