import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { layerOf, loadProfile, selfTimes, sourceOf, type CpuProfile, type ProfileNode } from './cpu-profile.js';
import { CONTENDERS, type Contender } from './drivers.js';

/**
 * CPU profiles of the same workload on every contender, side by side: where each spends its CPU per
 * turn or per tool call — xstate, agentchart's machines and runtime, each peer library, tool-argument
 * validation, GC, the engine — and agentchart's hottest functions.
 *   npx tsx bench/profile-compare.ts <perTurn|perTool|batch1000|history> [seconds] [contender …]
 * Each contender runs in its own process (bench/profile.ts --out=…), one after the other: only the
 * loop is profiled, after a warm-up. Profiles and the table go to bench/profiles/.
 */

const [workload = '', secondsArg] = process.argv.slice(2);
const seconds = Number(secondsArg ?? 10);
const chosen = CONTENDERS.filter((c) => process.argv.slice(3).includes(c));
const contenders: readonly Contender[] = chosen.length > 0 ? chosen : CONTENDERS;
const root = fileURLToPath(new URL('..', import.meta.url));
const dir = fileURLToPath(new URL('./profiles/', import.meta.url));
mkdirSync(dir, { recursive: true });

interface Summary {
  workload: string;
  contender: Contender;
  iterations: number;
  units: number;
  unit: string;
  /** Wall clock and process CPU time of the profiled loop. */
  ms: number;
  cpuMs: number;
}

interface Profiled {
  summary: Summary;
  profile: CpuProfile;
  /** Sampled CPU (µs) by layer, idle excluded. */
  byLayer: Map<string, number>;
  busyUs: number;
}

function profileOne(contender: Contender): Profiled {
  const file = `${dir}${workload}-${contender}.cpuprofile`;
  const args = ['--import', 'tsx', 'bench/profile.ts', workload, String(seconds), contender, `--out=${file}`];
  process.stderr.write(`profile-compare: ${contender} … `);
  const child = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  const last = child.stderr.trim().split('\n').at(-1) ?? '';
  if (child.status !== 0 || !last.startsWith('{')) {
    throw new Error(`profile-compare: ${contender} failed (exit ${child.status}):\n${child.stderr}`);
  }
  const summary = JSON.parse(last) as Summary;
  process.stderr.write(`${summary.iterations} runs\n`);
  const profile = loadProfile(file);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const byLayer = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of selfTimes(profile)) {
    const layer = layerOf((byId.get(id) as ProfileNode).callFrame);
    if (layer === '(idle)') continue;
    byLayer.set(layer, (byLayer.get(layer) ?? 0) + us);
    busyUs += us;
  }
  return { summary, profile, byLayer, busyUs };
}

/** agentchart's hottest functions by self time, as table rows. */
function hottest(p: Profiled, limit: number): string[] {
  const byId = new Map(p.profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map<string, number>();
  for (const [id, us] of selfTimes(p.profile)) {
    const frame = (byId.get(id) as ProfileNode).callFrame;
    if (frame.functionName === '(idle)') continue;
    const key = `${frame.functionName || '(anonymous)'} — ${sourceOf(frame)}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  }
  return [...byFunction.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([key, us]) => `| ${key} | ${cell(p, us)} |`);
}

if (!['perTurn', 'perTool', 'batch1000', 'history'].includes(workload)) {
  process.stderr.write(
    `usage: bench/profile-compare.ts <perTurn|perTool|batch1000|history> [seconds] [${CONTENDERS.join(' ')}]\n`,
  );
  process.exit(2);
}

const profiled = contenders.map(profileOne);
const unit = profiled[0]?.summary.unit === 'turn' ? 'µs/turn' : 'µs/tool call';
const layers = [...new Set(profiled.flatMap((p) => [...p.byLayer.keys()]))].sort(
  (a, b) =>
    Math.max(...profiled.map((p) => p.byLayer.get(b) ?? 0)) - Math.max(...profiled.map((p) => p.byLayer.get(a) ?? 0)),
);
/** A layer's share of the main-thread samples, as µs of the process CPU time per unit (see the table's header). */
const cpuPerUnit = (p: Profiled) => (p.summary.cpuMs * 1000) / p.summary.units;
const cell = (p: Profiled, us: number) =>
  `${((cpuPerUnit(p) * us) / p.busyUs).toFixed(1)} (${((100 * us) / p.busyUs).toFixed(0)}%)`;
const agentchart = profiled.find((p) => p.summary.contender === 'agentchart');
const lines = [
  `# CPU profile: ${workload}, ${seconds} s per contender`,
  '',
  `Each layer: its share of the main thread's busy samples, and that share of the process CPU time per unit (${unit}).`,
  "V8's samples are spaced in wall-clock time, so on a loaded machine they also count time spent waiting for a core:",
  'the shares are sound, their absolute sample time is not; the process CPU time also counts GC helper threads.',
  'Each contender ran alone in its own process, profiled after a warm-up.',
  '',
  `| layer | ${profiled.map((p) => p.summary.contender).join(' | ')} |`,
  `|---|${profiled.map(() => '---').join('|')}|`,
  `| **process CPU** | ${profiled.map((p) => cell(p, p.busyUs)).join(' | ')} |`,
  `| wall clock | ${profiled.map((p) => ((p.summary.ms * 1000) / p.summary.units).toFixed(1)).join(' | ')} |`,
  ...layers.map((layer) => `| ${layer} | ${profiled.map((p) => cell(p, p.byLayer.get(layer) ?? 0)).join(' | ')} |`),
  `| runs of the workload | ${profiled.map((p) => String(p.summary.iterations)).join(' | ')} |`,
  '',
  ...(agentchart
    ? [
        '## agentchart: hottest functions (self time)',
        '',
        `| function — source | ${unit} (share) |`,
        '|---|---|',
        ...hottest(agentchart, 25),
        '',
      ]
    : []),
  `Deeper: \`npx tsx bench/profile-summary.ts bench/profiles/${workload}-agentchart.cpuprofile 40\``,
  "(inclusive times of agentchart's and xstate's functions).",
  '',
];
const report = `${dir}${workload}-compare.md`;
writeFileSync(report, lines.join('\n'));
process.stdout.write(lines.join('\n'));
process.stderr.write(`profile-compare: wrote ${report}\n`);
