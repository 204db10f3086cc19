import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { durableCost, durableRatios, type DurableImplementation } from './durable.js';
import { loadAverage } from './stats.js';

/**
 * `tsx bench/compare-durable.ts <before-root> <after-root> [turns] [rounds]`: the durable workloads
 * (`bench/durable.ts`) on two builds of agentchart (each root holds a `dist/` from `npm run build`),
 * loaded side by side in one process and run in alternating rounds, so a change is compared at one
 * load of this shared machine. Prints a table and writes bench/durable-compare.json.
 */

async function load(root: string): Promise<DurableImplementation> {
  const at = (entry: string) => pathToFileURL(resolve(root, 'dist', 'src', entry)).href;
  const core = (await import(at('index.js'))) as typeof import('agentchart');
  const sqlite = (await import(at('sqlite.js'))) as typeof import('agentchart/sqlite');
  const testing = (await import(at('testing.js'))) as typeof import('agentchart/testing');
  return {
    createAgent: core.createAgent,
    defineTool: core.defineTool,
    memoryStore: core.memoryStore,
    sqliteStore: sqlite.sqliteStore,
    scriptedModel: testing.scriptedModel,
  };
}

const [beforeRoot, afterRoot, turnsArg, roundsArg] = process.argv.slice(2);
if (!beforeRoot || !afterRoot)
  throw new Error('usage: tsx bench/compare-durable.ts <before-root> <after-root> [turns] [rounds]');
const turns = Number(turnsArg ?? 200);
const rounds = Number(roundsArg ?? 10);
const loadBefore = loadAverage();
const results = await durableCost({ before: await load(beforeRoot), after: await load(afterRoot) }, turns, rounds, 2);
const before = results.before ?? [];
const after = results.after ?? [];
const ratios = durableRatios(before, after);
const rows = after.map((cost) => {
  const base = before.find((b) => b.store === cost.store);
  return `| ${cost.store} | ${cost.turns} | ${base?.steps} → ${cost.steps} | ${base?.usPerTurn.median} → ${cost.usPerTurn.median} | ${base?.usPerStep.median} → ${cost.usPerStep.median} | ${ratios[cost.store]} |`;
});
const table = [
  `durable workloads, ${rounds} alternating rounds, load ${loadBefore['1m']} → ${loadAverage()['1m']}`,
  '',
  '| store | turns | steps per run | µs per turn (before → after) | µs per step | after / before |',
  '|---|---|---|---|---|---|',
  ...rows,
].join('\n');
console.log(table);
writeFileSync(
  new URL('./durable-compare.json', import.meta.url),
  `${JSON.stringify({ beforeRoot, afterRoot, turns, rounds, loadBefore, loadAfter: loadAverage(), results, ratios }, null, 2)}\n`,
);
