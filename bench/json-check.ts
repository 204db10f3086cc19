import { z } from 'zod';
import { createAgent, defineTool } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { jsonCopy, jsonProblem } from '../src/domain/json-problem.js';
import { median } from './stats.js';

/**
 * What refusing progress updates JSON cannot hold costs per update, on the shapes tools send: the
 * check alone (`jsonProblem`), the check with the copy `ctx.update` publishes (`jsonCopy`), and one
 * whole update through an agent (the awaited relay to a live subscriber, no store; the copy included).
 *
 *   npx tsx bench/json-check.ts [rounds]
 */

const rounds = Number(process.argv[2] ?? 7);

const shapes: Record<string, unknown> = {
  'a number': 42,
  '{ done, total }': { done: 12, total: 30 },
  'MCP progress { progress, total, message }': { progress: 12, total: 30, message: 'reading page 12 of 30' },
  'nested, 20 fields': {
    file: 'src/index.ts',
    stats: { lines: 120, bytes: 4096, tokens: [1, 2, 3, 4, 5] },
    tests: Array.from({ length: 5 }, (_, i) => ({ name: `case ${i}`, ok: i % 2 === 0 })),
  },
  'an array of 100 numbers': Array.from({ length: 100 }, (_, i) => i),
};

/** ns per call of `check` on `value` (each must find it JSON). */
function nsPer(check: (value: unknown) => boolean, value: unknown, iterations: number): number {
  let problems = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) if (!check(value)) problems++;
  const ns = Number(process.hrtime.bigint() - start) / iterations;
  if (problems > 0) throw new Error('a JSON value was refused');
  return ns;
}
const checkOnly = (value: unknown) => jsonProblem(value, 'partial') === null;
const checkAndCopy = (value: unknown) => !('problem' in jsonCopy(value, 'partial'));

/** One tool sending `updates` updates of `value`; ns per update seen by a subscriber. */
async function nsPerUpdate(value: unknown, updates: number): Promise<number> {
  const ticker = defineTool({
    name: 'ticker',
    description: 'Sends progress updates.',
    parameters: z.object({}),
    execute: async (_args, ctx) => {
      for (let i = 0; i < updates; i++) await ctx.update(value);
      return 'done';
    },
  });
  const model = scriptedModel([{ toolCalls: [{ name: 'ticker', arguments: {} }] }, { text: 'ok' }], {
    recordRequests: false,
  });
  const run = createAgent({ model, tools: [ticker] }).prompt('go');
  let received = 0;
  run.events.subscribe((event) => {
    if (event.type === 'toolExecutionUpdate') received++;
  });
  const start = process.hrtime.bigint();
  await run.result;
  const ns = Number(process.hrtime.bigint() - start) / updates;
  if (received !== updates) throw new Error(`${received} of ${updates} updates arrived`);
  return ns;
}

console.log(`node ${process.version}, ${rounds} rounds, medians`);
console.log(
  '| partial | check only (ns) | check and copy, as ctx.update (ns) | whole update (ns) | check and copy / update |',
);
console.log('|---|---|---|---|---|');
for (const [name, value] of Object.entries(shapes)) {
  const checks: number[] = [];
  const copies: number[] = [];
  const updates: number[] = [];
  for (let round = 0; round < rounds; round++) {
    checks.push(nsPer(checkOnly, value, 200_000));
    copies.push(nsPer(checkAndCopy, value, 200_000));
    updates.push(await nsPerUpdate(value, 50_000));
  }
  const [check, copy, update] = [median(checks), median(copies), median(updates)];
  const share = ((copy / update) * 100).toFixed(1);
  console.log(`| ${name} | ${check.toFixed(0)} | ${copy.toFixed(0)} | ${update.toFixed(0)} | ${share} % |`);
}
