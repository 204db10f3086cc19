import { createHook } from 'node:async_hooks';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createAgent } from 'agentchart';
import { loadProfile, selfTimes, sourceOf, type CallFrame, type ProfileNode } from './cpu-profile.js';
import { timeTurns, type Contender } from './drivers.js';
import { chargedLayer, GROUP_ORDER, groupOf, LAYER_ORDER } from './layers.js';
import type { LoadRun } from './load.js';
import { renderMarkdown, type BenchResults } from './report.js';
import type { ProfileIndex } from './report-profiles.js';
import { replayModel } from './replay-model.js';
import { loadAverage } from './stats.js';
import { streamingScript } from './streaming.js';
import { runChild } from './subprocess.js';
import { benchTools, turnsModel } from './workload.js';
import { runSkeleton, turnCounts } from './xstate-floor.js';
import { xstateCounter, type XStateCounts } from './xstate-counts.js';

/**
 * Where agentchart's time and memory go, one section per speed target (the workload of that target,
 * agentchart beside what the target measures it against), by runtime layer (bench/layers.ts) and by
 * coarse group, with the next step for each — written to bench/where-time-goes.md and, for
 * bench/results.md's missed targets, bench/where-time-goes.json (results.md is rendered again from
 * bench/results.json when that exists). Each workload is profiled in a process of its own
 * (bench/profile.ts): a plain run for the CPU per unit, a CPU profile, a sampling profile of every
 * allocation; the load scenario is profiled in bench/load.ts (--cpu, --heap-live).
 *
 *   npm run bench:where -- [seconds] [sessions]
 */

const seconds = Number(process.argv[2] ?? 6);
const loadSessions = Number(process.argv[3] ?? 1_000);
const dir = fileURLToPath(new URL('./profiles/', import.meta.url));
mkdirSync(dir, { recursive: true });
const loadSamples: number[] = [loadAverage()['1m']];
const sampler = setInterval(() => loadSamples.push(loadAverage()['1m']), 5_000);
sampler.unref();

interface Summary {
  units: number;
  cpuMs: number;
  ms: number;
  iterations: number;
}

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

/** CPU µs, or allocated bytes, per unit by layer; the process CPU per unit; agentchart's hottest functions. */
interface Attributed {
  cpuPerUnit: number;
  cpu: Map<string, number>;
  alloc: Map<string, number>;
  allocPerUnit: number;
  hottest: [string, number][];
}

/** Bytes by layer of a sampling heap profile (each allocation charged as a CPU sample is). */
function heapByLayer(head: HeapNode): Map<string, number> {
  const byLayer = new Map<string, number>();
  const walk = (node: HeapNode, stack: CallFrame[]) => {
    const path = [node.callFrame, ...stack];
    if (node.selfSize > 0) {
      const layer = chargedLayer(path);
      byLayer.set(layer, (byLayer.get(layer) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, path);
  };
  walk(head, []);
  return byLayer;
}

function cpuByLayer(file: string): { byLayer: Map<string, number>; busy: number; bySelf: Map<string, number> } {
  const profile = loadProfile(file);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byLayer = new Map<string, number>();
  const bySelf = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfTimes(profile)) {
    const stack: CallFrame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
      stack.push((byId.get(at) as ProfileNode).callFrame);
    // The profiler's own stop (serializing the profile) is sampled too: not the workload's.
    if (stack.some((frame) => frame.url === 'node:inspector')) continue;
    const layer = chargedLayer(stack);
    if (layer === '(idle)') continue;
    busy += us;
    byLayer.set(layer, (byLayer.get(layer) ?? 0) + us);
    const leaf = stack[0] as CallFrame;
    const key = `${leaf.functionName || '(anonymous)'} — ${sourceOf(leaf)}`;
    bySelf.set(key, (bySelf.get(key) ?? 0) + us);
  }
  return { byLayer, busy, bySelf };
}

async function attribute(workload: string, contender: string): Promise<Attributed> {
  const base = `${dir}${workload}-${contender}`;
  const args = (flag: string) => [workload, String(seconds), contender, flag];
  process.stderr.write(`where-time-goes: ${workload} ${contender}\n`);
  // The CPU per unit from a run with no profiler attached; the shares from the CPU profile.
  const plain = await runChild<Summary>('profile.ts', args('--plain'));
  await runChild<Summary>('profile.ts', args(`--out=${base}.cpuprofile`));
  const allocRun = await runChild<Summary>('profile.ts', args(`--alloc=${base}.heapprofile`));
  const cpuPerUnit = (plain.cpuMs * 1000) / plain.units;
  const { byLayer, busy, bySelf } = cpuByLayer(`${base}.cpuprofile`);
  const scale = (us: number) => (cpuPerUnit * us) / busy;
  const heap = JSON.parse(readFileSync(`${base}.heapprofile`, 'utf8')) as { head: HeapNode };
  const bytes = heapByLayer(heap.head);
  const alloc = new Map([...bytes].map(([layer, b]) => [layer, b / allocRun.units]));
  return {
    cpuPerUnit,
    cpu: new Map([...byLayer].map(([layer, us]) => [layer, scale(us)])),
    alloc,
    allocPerUnit: [...alloc.values()].reduce((a, b) => a + b, 0),
    hottest: [...bySelf]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20)
      .map(([name, us]) => [name, scale(us)]),
  };
}

/** Promises created per unit of `work` (async_hooks' PROMISE resources: every await and then included). */
async function promisesPer(units: number, work: () => Promise<unknown>): Promise<number> {
  await work();
  let created = 0;
  const hook = createHook({ init: (_id, type) => void (type === 'PROMISE' && created++) });
  hook.enable();
  await work();
  hook.disable();
  return created / units;
}

interface Counts {
  perTurn: { agentchart: XStateCounts; skeleton: XStateCounts };
  perToolCall: XStateCounts;
  perDelta: XStateCounts;
  promises: { turn: Record<string, number>; delta: Record<string, number> };
}

async function counts(): Promise<Counts> {
  const perTurn = await turnCounts();
  const tools = xstateCounter();
  const agent = createAgent({ model: turnsModel(50, 20), tools: benchTools, inspect: tools.inspect });
  await agent.prompt('go').result;
  const perToolCall = tools.per(50 * 20);
  const { script, expected } = streamingScript(50, 200);
  const deltas = xstateCounter();
  const streaming = createAgent({
    model: replayModel(script),
    tools: benchTools,
    streaming: 'live',
    inspect: deltas.inspect,
  });
  await streaming.prompt('go').result;
  const perDelta = deltas.per(expected.length);
  const turnPromises: Record<string, number> = {};
  for (const contender of ['agentchart', 'pi', 'hand'] as Contender[])
    turnPromises[contender] = await promisesPer(201, () => timeTurns(contender, 200, 1));
  turnPromises.skeleton = await promisesPer(201, () => runSkeleton(200));
  const deltaPromises: Record<string, number> = {};
  deltaPromises.agentchart = await promisesPer(expected.length, async () => {
    const agent = createAgent({ model: replayModel(script), tools: benchTools, streaming: 'live' });
    const run = agent.prompt('go');
    run.events.subscribe(() => {});
    await run.result;
  });
  return {
    perTurn,
    perToolCall,
    perDelta,
    promises: { turn: turnPromises, delta: deltaPromises },
  };
}

async function liveUnderLoad(library: 'agentchart' | 'pi'): Promise<{ run: LoadRun; perSession: Map<string, number> }> {
  const file = `${dir}load-${library}.heapprofile`;
  process.stderr.write(`where-time-goes: load ${library} ${loadSessions}\n`);
  const run = await runChild<LoadRun>(
    'load.ts',
    [library, String(loadSessions), '20', '3', `--heap-live=${file}`],
    ['--max-old-space-size=8192'],
  );
  const heap = JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode };
  const perSession = new Map([...heapByLayer(heap.head)].map(([layer, b]) => [layer, b / loadSessions]));
  return { run, perSession };
}

const fmt = (value: number, digits = 1) =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** Rows of layers × columns; a column is a map of layer → value; layers all columns leave empty are left out. */
function layerRows(columns: Map<string, number>[], digits: number[], minimum = 0.05): string[] {
  const layers = LAYER_ORDER.filter((layer) => columns.some((column) => (column.get(layer) ?? 0) >= minimum));
  return layers.map(
    (layer) =>
      `| ${layer} | ${columns.map((column, i) => (column.has(layer) ? fmt(column.get(layer) as number, digits[i]) : '')).join(' | ')} |`,
  );
}

const share = (part: number, whole: number) => `${fmt((100 * part) / whole, 0)}%`;
const kb = (bytes: Map<string, number>) => new Map([...bytes].map(([layer, b]) => [layer, b / 1024]));
const sum = (values: Map<string, number>) => [...values.values()].reduce((a, b) => a + b, 0);

function countRows(columns: [string, XStateCounts][]): string[] {
  const row = (label: string, key: keyof XStateCounts) =>
    `| ${label} | ${columns.map(([, c]) => fmt(c[key], 2)).join(' | ')} |`;
  return [
    `| XState work | ${columns.map(([name]) => name).join(' | ')} |`,
    `|---|${columns.map(() => '---').join('|')}|`,
    row('actors created', 'actors'),
    row('events delivered', 'events'),
    row('microsteps', 'microsteps'),
    row('custom actions executed', 'actions'),
    row('assigns (a context and snapshot copy each)', 'assigns'),
  ];
}

/** A profile of one workload and contender, taken once however many sections show it. */
const taken = new Map<string, Attributed>();
async function profiled(workload: string, contender: string): Promise<Attributed> {
  const key = `${workload} ${contender}`;
  const known = taken.get(key);
  if (known) return known;
  const fresh = await attribute(workload, contender);
  taken.set(key, fresh);
  return fresh;
}

/** The load scenario's CPU by layer, per session (bench/load.ts --cpu: the sessions' span only). */
async function loadCpu(library: 'agentchart' | 'pi'): Promise<Attributed> {
  const file = `${dir}load-${library}.cpuprofile`;
  process.stderr.write(`where-time-goes: load CPU ${library} ${loadSessions}\n`);
  const run = await runChild<LoadRun>(
    'load.ts',
    [library, String(loadSessions), '20', '3', `--cpu=${file}`],
    ['--max-old-space-size=8192'],
  );
  const cpuPerUnit = (run.cpuMs * 1000) / loadSessions;
  const { byLayer, busy, bySelf } = cpuByLayer(file);
  const scale = (us: number) => (cpuPerUnit * us) / busy;
  return {
    cpuPerUnit,
    cpu: new Map([...byLayer].map(([layer, us]) => [layer, scale(us)])),
    alloc: new Map(),
    allocPerUnit: 0,
    hottest: [...bySelf]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20)
      .map(([name, us]) => [name, scale(us)]),
  };
}

interface Side {
  label: string;
  p: Attributed;
}

/** One speed target: its workload profiled for agentchart and for what the target compares it with. */
interface TargetSection {
  /** The anchor in where-time-goes.md, and the key bench/report-targets.ts links a target by. */
  id: string;
  title: string;
  workload: string;
  unit: string;
  ours: Side;
  against: Side;
  others?: Side[];
  /** What the target measures: CPU per unit (the default), or bytes allocated per unit (a heap target). */
  basis?: 'cpu' | 'alloc';
  /** What the figures above mean for this target, and what to do next (read from these profiles). */
  reading: string;
  nextStep: string;
}

const byGroup = (layers: Map<string, number>) => {
  const groups = new Map<string, number>();
  for (const [layer, value] of layers) groups.set(groupOf(layer), (groups.get(groupOf(layer)) ?? 0) + value);
  return groups;
};

/** The figures a section's summary compares: CPU µs per unit, or KB allocated per unit. */
function basisOf(section: TargetSection, side: Side): { total: number; layers: Map<string, number> } {
  return section.basis === 'alloc'
    ? { total: side.p.allocPerUnit / 1024, layers: kb(side.p.alloc) }
    : { total: side.p.cpuPerUnit, layers: side.p.cpu };
}

/** The groups where agentchart spends more than the reference, largest first. */
function gaps(section: TargetSection): [string, number][] {
  const ours = byGroup(basisOf(section, section.ours).layers);
  const theirs = byGroup(basisOf(section, section.against).layers);
  return GROUP_ORDER.map((group): [string, number] => [group, (ours.get(group) ?? 0) - (theirs.get(group) ?? 0)])
    .filter(([, gap]) => gap > 0)
    .sort((a, b) => b[1] - a[1]);
}

function digitsFor(value: number): number {
  return value >= 100 ? 0 : value >= 10 ? 1 : value >= 1 ? 2 : 3;
}

/** One line: the two figures, their ratio, and where most of the difference is. */
function summaryOf(section: TargetSection): string {
  const { ours, against, unit } = section;
  const [mine, theirs] = [basisOf(section, ours).total, basisOf(section, against).total];
  const d = digitsFor(theirs);
  const what = section.basis === 'alloc' ? `KB allocated per ${unit}` : `µs of CPU per ${unit}`;
  const top = gaps(section)
    .slice(0, 3)
    .map(([group, gap]) => `${group} +${fmt(gap, d)}`)
    .join(', ');
  return (
    `${ours.label} ${fmt(mine, d)} ${what} against ${against.label} ${fmt(theirs, d)} ` +
    `(${fmt(mine / theirs, 2)} ×); most of the difference: ${top || 'none'}`
  );
}

function renderSection(section: TargetSection): string[] {
  const sides = [section.ours, section.against, ...(section.others ?? [])];
  const d = digitsFor(Math.min(...sides.map((side) => side.p.cpuPerUnit)));
  const kbDigits = 2;
  const withAlloc = sides.filter((side) => side.p.allocPerUnit > 0);
  const groupsOf = sides.map((side) => byGroup(side.p.cpu));
  const allocOf = withAlloc.map((side) => byGroup(kb(side.p.alloc)));
  const oursGroups = groupsOf[0] as Map<string, number>;
  const theirGroups = groupsOf[1] as Map<string, number>;
  const rows = GROUP_ORDER.filter(
    (group) =>
      groupsOf.some((g) => (g.get(group) ?? 0) >= 10 ** -d) || allocOf.some((g) => (g.get(group) ?? 0) >= 0.01),
  ).map((group) => {
    const cpu = groupsOf.map((g) => (g.has(group) ? fmt(g.get(group) as number, d) : ''));
    const gap = (oursGroups.get(group) ?? 0) - (theirGroups.get(group) ?? 0);
    const alloc = allocOf.map((g) => (g.has(group) ? fmt(g.get(group) as number, kbDigits) : ''));
    return `| ${group} | ${cpu.join(' | ')} | ${gap >= 0 ? '+' : ''}${fmt(gap, d)} |${alloc.map((cell) => ` ${cell} |`).join('')}`;
  });
  const total = (side: Side) => fmt(side.p.cpuPerUnit, d);
  const allocTotal = withAlloc.map((side) => fmt(side.p.allocPerUnit / 1024, kbDigits));
  const topLayers = [...section.ours.p.cpu]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([layer, us]) => `${layer} ${fmt(us, d)} (${share(us, section.ours.p.cpuPerUnit)})`);
  const unitCap = section.unit;
  return [
    `<a id="${section.id}"></a>`,
    '',
    `### ${section.title}`,
    '',
    `Workload: ${section.workload}. ${summaryOf(section)}.`,
    '',
    `| group | ${sides.map((side) => `${side.label} µs/${unitCap}`).join(' | ')} | ${section.ours.label} − ${section.against.label} µs |${withAlloc.map((side) => ` ${side.label} KB/${unitCap} |`).join('')}`,
    `|---|${sides.map(() => '---').join('|')}|---|${withAlloc.map(() => '---|').join('')}`,
    ...rows,
    `| **total** | ${sides.map(total).join(' | ')} | ${fmt(section.ours.p.cpuPerUnit - section.against.p.cpuPerUnit, d)} |${allocTotal.map((cell) => ` ${cell} |`).join('')}`,
    '',
    `${section.ours.label}'s largest layers (bench/layers.ts): ${topLayers.join('; ')}.`,
    '',
    section.reading,
    '',
    `**Next step:** ${section.nextStep}`,
    '',
  ];
}

// The workloads of the targets, agentchart and the reference of each (bench/results.md says which were missed).
const turn = {
  agentchart: await profiled('perTurn', 'agentchart'),
  skeleton: await profiled('perTurn', 'skeleton'),
  pi: await profiled('perTurn', 'pi'),
  hand: await profiled('perTurn', 'hand'),
};
const tool = { agentchart: await profiled('perTool', 'agentchart'), pi: await profiled('perTool', 'pi') };
const delta = {
  agentchart: await profiled('streaming', 'agentchart'),
  pi: await profiled('streaming', 'pi'),
  generate: await profiled('streaming', 'aiSdkGenerate'),
};
const short = {
  agentchart: await profiled('short', 'agentchart'),
  stream: await profiled('short', 'aiSdk'),
  generate: await profiled('short', 'aiSdkGenerate'),
  pi: await profiled('short', 'pi'),
};
const batch10 = {
  agentchart: await profiled('batch10', 'agentchart'),
  generate: await profiled('batch10', 'aiSdkGenerate'),
};
const history = { agentchart: await profiled('history', 'agentchart'), pi: await profiled('history', 'pi') };
const durable = {
  turn: await profiled('durableTurn', 'agentchart'),
  tool: await profiled('durableTool', 'agentchart'),
};
const counted = await counts();
const load = { agentchart: await liveUnderLoad('agentchart'), pi: await liveUnderLoad('pi') };
const loadProfiles = { agentchart: await loadCpu('agentchart'), pi: await loadCpu('pi') };
clearInterval(sampler);
loadSamples.push(loadAverage()['1m']);

const sections: TargetSection[] = [
  {
    id: 'turn-vs-floor',
    title: 'Per turn against the XState-floor skeleton (≤ 1.5 ×)',
    workload: 'T=200 × K=1, µs per turn (all 201 turns)',
    unit: 'turn',
    ours: { label: 'agentchart', p: turn.agentchart },
    against: { label: 'skeleton', p: turn.skeleton },
    others: [
      { label: 'pi', p: turn.pi },
      { label: 'hand loop', p: turn.hand },
    ],
    reading:
      `agentchart asks XState for the skeleton's actors, events and microsteps (the XState work table below: ${fmt(counted.perTurn.agentchart.assigns, 2)} assigns a turn against ${fmt(counted.perTurn.skeleton.assigns, 2)}), ` +
      'but its charts are deeper (running.turn, ASSISTANT.streaming, TOOL_EXECUTION.running) with longer guard lists, so each of those events costs XState more; ' +
      "the runtime's own layers (the model port read, emission, the history view, the step boundary, timers) are each a few percent, and GC follows the bytes XState's snapshot copies leave.",
    nextStep:
      "the turn chart's hot path flatter and with fewer assigns (one assign per macrostep, no nested streaming/running states): machines/ work; " +
      'on the runtime side, the model port read (one promise and reaction per item) and the history view built per event.',
  },
  {
    id: 'tool-call-k20',
    title: 'Per tool call at K=20 against pi (≤ 1.5 ×)',
    workload: 'T=50 × K=20, µs per tool call (turn costs included)',
    unit: 'call',
    ours: { label: 'agentchart', p: tool.agentchart },
    against: { label: 'pi', p: tool.pi },
    reading:
      `A call costs XState ${fmt(counted.perToolCall.events, 2)} events and ${fmt(counted.perToolCall.assigns, 2)} assigns (its result recorded in the turn's context, a snapshot copy each) plus its share of the turn; ` +
      'the runtime spends it in the tool effects (publish, commit, start, run), the stream events of the call and its validation.',
    nextStep:
      "the call's results recorded in the turn chart once per batch rather than per call (one assign for the batch, machines/ work); " +
      'in the runtime, the toolExecutionStart/End events and the step boundary done once per batch instead of per call.',
  },
  {
    id: 'streamed-delta',
    title: 'Per streamed text delta against pi (≤ 1 ×)',
    workload:
      'T=50 × D=200 text deltas per reply and one tool call, a live subscriber checking every delta; µs per delta, turns included',
    unit: 'delta',
    ours: { label: 'agentchart', p: delta.agentchart },
    against: { label: 'pi', p: delta.pi },
    reading:
      `Deltas do not touch the charts (${fmt(counted.perDelta.events, 3)} XState events per delta, all of them the turns around the deltas). ` +
      "A delta costs the model port's read (the iterator's promise and one reaction), its check (by hand, no copy), the accumulator's delta object, the event and its fan-out (rxjs's subscriber chain into the isolated listener), and its share of the 51 turns — the XState and GC rows.",
    nextStep:
      "the run's listeners called directly when no operator is piped (rxjs's Subscriber chain skipped per event); the turns' share is the per-turn target's.",
  },
  {
    id: 'ai-sdk-stream',
    title: "≥ 2 × faster than the AI SDK's streamText: the short session (T=1 × K=1)",
    workload: 'T=1 × K=1 then a text answer, µs per session (results.md: the worst configuration against streamText)',
    unit: 'session',
    ours: { label: 'agentchart', p: short.agentchart },
    against: { label: 'streamText', p: short.stream },
    others: [
      { label: 'generateText', p: short.generate },
      { label: 'pi', p: short.pi },
    ],
    reading:
      "A short session is a run's start and end around two turns: the master and two turn actors created and started (XState's initial snapshots, the largest allocation of the session), agentStart/agentEnd with their views, and the two turns.",
    nextStep:
      'the per-turn work (the first target) is most of it; then the run start: the master actor and its first turn created in one macrostep.',
  },
  {
    id: 'ai-sdk-generate',
    title: "≥ 2 × faster than the AI SDK's generateText: short sessions, small batches, streamed text",
    workload:
      'T=1 × K=1 (µs per session); the same figures for one turn of K=10 and for the streamed deltas follow the table',
    unit: 'session',
    ours: { label: 'agentchart', p: short.agentchart },
    against: { label: 'generateText', p: short.generate },
    reading: [
      `One turn of K=10 (µs per call): agentchart ${fmt(batch10.agentchart.cpuPerUnit)} against generateText ${fmt(batch10.generate.cpuPerUnit)} ` +
        `(${fmt(batch10.agentchart.cpuPerUnit / batch10.generate.cpuPerUnit, 2)} ×); by group, agentchart: ${groupLine(batch10.agentchart)}; generateText: ${groupLine(batch10.generate)}.`,
      `Streamed deltas (µs per delta): agentchart ${fmt(delta.agentchart.cpuPerUnit, 2)} live against generateText ${fmt(delta.generate.cpuPerUnit, 2)}, which gets the text whole (no stream, no event per delta).`,
      `generateText's whole short session costs about what the XState-floor skeleton costs for its two turns (skeleton ${fmt(turn.skeleton.cpuPerUnit)} µs per turn): ` +
        'with the charts run by XState in the hot path, 2 × ahead of it is out of reach of runtime work alone.',
    ].join('\n\n'),
    nextStep:
      "the per-turn target's machines/ work (fewer actors, events and assigns per turn) first; for the deltas, the comparison that matches generateText is agentchart without live streaming.",
  },
  {
    id: 'heap-growth',
    title: 'Heap growth of a 2,000-turn session against pi (≤ 2 ×)',
    workload: 'one session of 2,000 turns × 1 call; µs and KB allocated per turn',
    unit: 'turn',
    basis: 'alloc',
    ours: { label: 'agentchart', p: history.agentchart },
    against: { label: 'pi', p: history.pi },
    reading:
      `The target's figure is the heap used right after the session with no GC: the live set plus the garbage left since V8's last collection, so it follows the bytes allocated per turn ` +
      `(agentchart ${fmt(history.agentchart.allocPerUnit / 1024)} KB, pi ${fmt(history.pi.allocPerUnit / 1024)} KB) and where the GC cycle happens to be when the session ends, the same method for both. ` +
      "What the session keeps — the live growth after a full GC (results.md's memory table) — is within 2 × of pi's; the garbage is mostly XState's snapshot copies (the XState row).",
    nextStep:
      "fewer assigns and microsteps per turn (each copies the context and the snapshot): the per-turn target's machines/ work; the runtime's own allocation per turn is a few KB.",
  },
  {
    id: 'active-sessions-wall',
    title: '10,000 concurrently active sessions: wall time against pi (≤ 2 ×)',
    workload: `the load scenario at ${loadSessions.toLocaleString('en-US')} sessions (20 turns × 3 tools waiting 1–5 ms, a subscriber), CPU per session`,
    unit: 'session',
    ours: { label: 'agentchart', p: loadProfiles.agentchart },
    against: { label: 'pi', p: loadProfiles.pi },
    reading:
      "The sessions wait on timers, so the wall time is the CPU of 21 turns and 60 tool calls per session and the GC of a heap holding every session's live set: the per-turn and per-call costs above, times the sessions.",
    nextStep:
      'the per-turn and per-call targets; the garbage per turn (promoted under load, collected by full GCs over every session) for the GC share.',
  },
  {
    id: 'durable-turn',
    title: 'Durable sessions (sqliteStore): per turn against the same agent in memory (≤ 2 ×)',
    workload: 'T=200 × K=1 with sqliteStore (a new database per session), µs per turn',
    unit: 'turn',
    ours: { label: 'SQLite', p: durable.turn },
    against: { label: 'in memory', p: turn.agentchart },
    reading:
      'A K=1 turn writes 4 steps, each stored before its events are published: the store row (SQLite: BEGIN IMMEDIATE, the inserts, COMMIT — the write-ahead log is wall time the CPU does not show), the checkpoint and step record, their zod check.',
    nextStep:
      "fewer steps per turn (the tool's end and the turn's end as one step when they fall in the same task, keeping stored-before-published); " +
      'the zod check of every step the runtime itself built (the zod row) replaced by checking only what came from outside, and the checkpoint encoded by the parts that changed.',
  },
  {
    id: 'durable-tool',
    title: 'Durable sessions (sqliteStore): per tool call against the same agent in memory (≤ 2 ×)',
    workload: 'T=50 × K=20 with sqliteStore, µs per tool call',
    unit: 'call',
    ours: { label: 'SQLite', p: durable.tool },
    against: { label: 'in memory', p: tool.agentchart },
    reading:
      "Each call's start and end is a step of its own (a tool may run for minutes: its start must be stored before it runs), so the per-step cost is paid twice per call.",
    nextStep:
      "a batch's starts written as one step (they begin in the same task), its ends grouped as they settle in one task; the zod check of the runtime's own steps, as for the turn.",
  },
];

function groupLine(p: Attributed): string {
  return [...byGroup(p.cpu)]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([group, us]) => `${group} ${fmt(us)}`)
    .join(', ');
}

const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const from = import.meta.resolve('agentchart').includes('/dist/') ? 'its build (dist/)' : 'its sources through tsx';
const t = turn.agentchart;
const loadRange = `${fmt(Math.min(...loadSamples), 2)}–${fmt(Math.max(...loadSamples), 2)}`;
const lines = [
  '# Where the time goes (generated)',
  '',
  `Written by \`bench/where-time-goes.ts\` on ${new Date().toISOString()} — commit ${commit}, Node ${process.version}, agentchart from ${from};`,
  `${seconds} s of each workload per profile, each in a process of its own; 1-minute load average ${loadRange} on 2 cores during the run.`,
  'Each layer (bench/layers.ts) is charged with the CPU samples and the allocations whose innermost frame on the stack is one of its',
  'functions — engine built-ins are charged to their caller — and its CPU share is scaled to the process CPU time per unit (a run with no profiler).',
  'On a loaded machine the absolute µs inflate (V8 samples in wall time, caches are shared); the shares and the ratios between columns hold.',
  'Allocations are sampled (every 4 KB on average, objects collected since included).',
  '',
  '## The targets, one profile each',
  '',
  'Each section profiles the workload of one speed target for agentchart and for what the target measures it against, by group',
  "(XState interpreter; our charts' actions and guards; the runtime; events and subscribers; the store; zod; GC; the peer library;",
  'the scripted model and driver), and ends with the next step. bench/results.md links the targets it found missed to these sections.',
  '',
  ...sections.flatMap(renderSection),
  '## Per turn in detail (T=200 × K=1)',
  '',
  `agentchart ${fmt(t.cpuPerUnit)} µs of CPU and ${fmt(t.allocPerUnit / 1024)} KB allocated per turn; the XState-floor skeleton ${fmt(turn.skeleton.cpuPerUnit)} µs and ` +
    `${fmt(turn.skeleton.allocPerUnit / 1024)} KB; pi ${fmt(turn.pi.cpuPerUnit)} µs and ${fmt(turn.pi.allocPerUnit / 1024)} KB; the hand loop ${fmt(turn.hand.cpuPerUnit)} µs and ${fmt(turn.hand.allocPerUnit / 1024)} KB.`,
  `Promises created per turn: agentchart ${fmt(counted.promises.turn.agentchart ?? 0)}, skeleton ${fmt(counted.promises.turn.skeleton ?? 0)}, pi ${fmt(counted.promises.turn.pi ?? 0)}, hand loop ${fmt(counted.promises.turn.hand ?? 0)}.`,
  '',
  '| layer | agentchart µs/turn | agentchart KB/turn | skeleton µs/turn | skeleton KB/turn | pi µs/turn | hand loop µs/turn |',
  '|---|---|---|---|---|---|---|',
  ...layerRows(
    [t.cpu, kb(t.alloc), turn.skeleton.cpu, kb(turn.skeleton.alloc), turn.pi.cpu, turn.hand.cpu],
    [1, 2, 1, 2, 1, 1],
  ),
  `| **total** | ${fmt(t.cpuPerUnit)} | ${fmt(t.allocPerUnit / 1024, 2)} | ${fmt(turn.skeleton.cpuPerUnit)} | ${fmt(turn.skeleton.allocPerUnit / 1024, 2)} | ${fmt(turn.pi.cpuPerUnit)} | ${fmt(turn.hand.cpuPerUnit)} |`,
  '',
  ...countRows([
    ['agentchart, per turn', counted.perTurn.agentchart],
    ['skeleton, per turn', counted.perTurn.skeleton],
    ['agentchart, per tool call (K=20)', counted.perToolCall],
    ['agentchart, per streamed delta', counted.perDelta],
  ]),
  '',
  '### agentchart per turn: hottest functions (self time, engine built-ins not charged to callers)',
  '',
  '| function — source | µs/turn | share |',
  '|---|---|---|',
  ...t.hottest.map(([name, us]) => `| ${name} | ${fmt(us, 2)} | ${share(us, t.cpuPerUnit)} |`),
  '',
  '## Per tool call in detail (T=50 × K=20)',
  '',
  '| layer | agentchart µs/call | agentchart KB/call | pi µs/call | pi KB/call |',
  '|---|---|---|---|---|',
  ...layerRows([tool.agentchart.cpu, kb(tool.agentchart.alloc), tool.pi.cpu, kb(tool.pi.alloc)], [2, 2, 2, 2], 0.01),
  '',
  '## Per streamed text delta in detail (T=50 × D=200, live subscriber)',
  '',
  `Promises created per delta (agentchart, turns included): ${fmt(counted.promises.delta.agentchart ?? 0, 2)}.`,
  '',
  '| layer | agentchart µs/delta | agentchart bytes/delta | pi µs/delta | pi bytes/delta |',
  '|---|---|---|---|---|',
  ...layerRows([delta.agentchart.cpu, delta.agentchart.alloc, delta.pi.cpu, delta.pi.alloc], [3, 0, 3, 0], 0.005),
  '',
  `## Live memory under load (${loadSessions.toLocaleString('en-US')} sessions, 20 turns × 3 tools, as the first session ends)`,
  '',
  `Sampled live heap per session by the layer that allocated it. agentchart: peak RSS ${fmt(load.agentchart.run.peakRssMB, 0)} MB, peak heap ${fmt(load.agentchart.run.peakHeapMB, 0)} MB; ` +
    `pi: ${fmt(load.pi.run.peakRssMB, 0)} MB and ${fmt(load.pi.run.peakHeapMB, 0)} MB. The peak RSS is not the live set: V8 lets the heap grow to several times what survived`,
  "its last full collection; `bench/live-sessions.ts` measures the live set per session at the sessions' largest.",
  '',
  '| layer | agentchart KB/session | pi KB/session |',
  '|---|---|---|',
  ...layerRows([kb(load.agentchart.perSession), kb(load.pi.perSession)], [1, 1]),
  `| **total** | ${fmt(sum(load.agentchart.perSession) / 1024)} | ${fmt(sum(load.pi.perSession) / 1024)} |`,
  '',
];
const out = fileURLToPath(new URL('./where-time-goes.md', import.meta.url));
writeFileSync(out, `${lines.join('\n')}\n`);
const index: ProfileIndex = {
  commit,
  generatedAt: new Date().toISOString(),
  seconds,
  load: loadRange,
  sections: sections.map((section) => ({
    id: section.id,
    title: section.title,
    summary: summaryOf(section),
    nextStep: section.nextStep,
  })),
};
writeFileSync(fileURLToPath(new URL('./where-time-goes.json', import.meta.url)), `${JSON.stringify(index, null, 2)}\n`);
process.stderr.write(`where-time-goes: wrote ${out} and where-time-goes.json\n`);
// results.md links its missed targets to these sections: rendered again from the last full run's JSON.
const resultsJson = fileURLToPath(new URL('./results.json', import.meta.url));
if (existsSync(resultsJson)) {
  const results = JSON.parse(readFileSync(resultsJson, 'utf8')) as BenchResults;
  writeFileSync(fileURLToPath(new URL('./results.md', import.meta.url)), renderMarkdown(results));
  process.stderr.write(
    `where-time-goes: rendered bench/results.md again from bench/results.json (${results.environment.commit})\n`,
  );
}
