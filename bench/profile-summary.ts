import { loadProfile, selfTimes, sourceOf, type CallFrame, type ProfileNode } from './cpu-profile.js';

/**
 * Summarizes a V8 .cpuprofile: self time by function and by source (xstate, agentchart's
 * machines/ and src/ files, zod, node internals, GC), and inclusive time of agentchart's and xstate's functions.
 *   npx tsx bench/profile-summary.ts bench/profiles/<file>.cpuprofile [top]
 */

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: bench/profile-summary.ts <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 30);
const profile = loadProfile(file);

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const selfUs = selfTimes(profile);
const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);

const label = (frame: CallFrame) => `${frame.functionName || '(anonymous)'} ${sourceOf(frame)}:${frame.lineNumber + 1}`;
const pct = (us: number) => `${((100 * us) / totalUs).toFixed(1).padStart(5)}%`;
const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;

function table(title: string, rows: Map<string, number>, limit: number): void {
  process.stdout.write(`\n${title}\n`);
  for (const [name, us] of [...rows.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
    process.stdout.write(`${ms(us)} ${pct(us)}  ${name}\n`);
  }
}

const selfByFunction = new Map<string, number>();
const selfBySource = new Map<string, number>();
for (const [id, us] of selfUs) {
  const frame = (byId.get(id) as ProfileNode).callFrame;
  selfByFunction.set(label(frame), (selfByFunction.get(label(frame)) ?? 0) + us);
  selfBySource.set(sourceOf(frame), (selfBySource.get(sourceOf(frame)) ?? 0) + us);
}

// Inclusive time: each sample counts once per distinct function on its stack.
const inclusive = new Map<string, number>();
for (const [id, us] of selfUs) {
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const frame = (byId.get(at) as ProfileNode).callFrame;
    const key = label(frame);
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + us);
  }
}

process.stdout.write(`${file}: ${(totalUs / 1000).toFixed(0)} ms sampled\n`);
table('Self time by source', selfBySource, 20);
table('Self time by function', selfByFunction, top);
table(
  'Inclusive time of agentchart functions',
  new Map([...inclusive].filter(([key]) => /\s(machines|src)\//.test(key))),
  top,
);
table('Inclusive time of xstate functions', new Map([...inclusive].filter(([key]) => key.includes(' xstate:'))), top);
