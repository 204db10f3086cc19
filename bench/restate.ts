// The cost of running a session on Restate (agentchart/restate) against the same agent in-process
// with a memory store: a real restate-server and one worker process on loopback, the workloads of
// test/restate/support/worker.ts. Run alone with `npx tsx bench/restate.ts`; `npm run bench` runs it
// as its last step.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAgent, memoryStore } from 'agentchart';
import {
  freePort,
  restateServerAvailable,
  startRestateServer,
  startWorker,
} from '../test/restate/support/restate-server.js';
import { testAgent } from '../test/restate/support/worker.js';
import { median } from './stats.js';

/**
 * turn: one text turn. safe / never: a turn of 20 tool calls ('safe': one journaled step each;
 * 'never': a start marker and the step), then a text turn. turns: ten turns of one 'safe' call, then text.
 */
const WORKLOADS = ['turn', 'safe', 'never', 'turns'] as const;
type Workload = (typeof WORKLOADS)[number];

export interface RestateBenchResults {
  rounds: number;
  /** Median milliseconds per prompt (a fresh session each), in-process (memory store) and on Restate. */
  promptMs: Record<Workload, { inProcess: number; restate: number }>;
  /** Restate's extra time, solved from the four workloads: once per prompt, per turn, per tool call. */
  overheadMs: { perPrompt: number; perTurn: number; perToolCall: { safe: number; never: number } };
}

export async function restateBenchmark(rounds: number): Promise<RestateBenchResults | null> {
  if (!restateServerAvailable()) return null;
  const server = await startRestateServer();
  const worker = await startWorker(await freePort(), mkdtempSync(join(tmpdir(), 'agentchart-bench-restate-')));
  try {
    await server.register(worker.uri);
    const samples = Object.fromEntries(
      WORKLOADS.map((workload) => [workload, { inProcess: [] as number[], restate: [] as number[] }]),
    ) as Record<Workload, { inProcess: number[]; restate: number[] }>;
    // Alternating rounds, a fresh session each time; the first two rounds warm up and are dropped.
    for (let round = -2; round < rounds; round++) {
      for (const workload of WORKLOADS) {
        const sessionId = `bench-${workload}-${round + 2}`;
        const inProcess = await timed(async () => {
          const agent = createAgent({ ...testAgent(sessionId), store: memoryStore(), sessionId });
          await agent.ready;
          const result = await agent.prompt('go').result;
          if (result.status !== 'completed') throw new Error(`in-process ${workload}: ${result.status}`);
        });
        const restate = await timed(async () => {
          const answer = await server.call<{ status: string }>('Agent', sessionId, 'prompt', 'go');
          if (answer.status !== 200 || answer.body.status !== 'completed')
            throw new Error(`restate ${workload}: ${JSON.stringify(answer).slice(0, 300)}`);
        });
        if (round >= 0) {
          samples[workload].inProcess.push(inProcess);
          samples[workload].restate.push(restate);
        }
      }
    }
    const promptMs = Object.fromEntries(
      WORKLOADS.map((workload) => [
        workload,
        { inProcess: round2(median(samples[workload].inProcess)), restate: round2(median(samples[workload].restate)) },
      ]),
    ) as RestateBenchResults['promptMs'];
    return { rounds, promptMs, overheadMs: solve(promptMs) };
  } finally {
    await worker.kill();
    await server.stop();
  }
}

/**
 * Overheads o = Restate − in-process: o(turn) = p + t; o(safe) = p + 2t + 20s; o(turns) = p + 11t + 10s;
 * o(never) = p + 2t + 20n. Solved for p (per prompt), t (per turn), s and n (per tool call).
 */
function solve(promptMs: RestateBenchResults['promptMs']): RestateBenchResults['overheadMs'] {
  const o = (workload: Workload) => promptMs[workload].restate - promptMs[workload].inProcess;
  const b = o('safe') - o('turn'); // t + 20s
  const c = o('turns') - o('turn'); // 10t + 10s
  const perTurn = (2 * c - b) / 19;
  const safe = (b - perTurn) / 20;
  const never = (o('never') - o('turn') - perTurn) / 20;
  return {
    perPrompt: round2(o('turn') - perTurn),
    perTurn: round2(perTurn),
    perToolCall: { safe: round2(safe), never: round2(never) },
  };
}

export function renderRestateMarkdown(results: RestateBenchResults): string {
  const { promptMs, overheadMs } = results;
  const row = (name: string, workload: Workload) =>
    `| ${name} | ${promptMs[workload].inProcess} | ${promptMs[workload].restate} | ` +
    `${round2(promptMs[workload].restate - promptMs[workload].inProcess)} |`;
  return [
    '## On Restate (agentchart/restate) against in-process',
    '',
    `Median of ${results.rounds} alternating rounds, a fresh session per prompt, called over HTTP through the ingress;`,
    'one restate-server and one worker process on loopback, sharing the machine with the benchmark process.',
    'In-process: the same agent (scripted model, instant tools) with a memory store.',
    '',
    '| prompt | in-process ms | Restate ms | overhead ms |',
    '|---|---|---|---|',
    row('one text turn', 'turn'),
    row("20 'safe' tool calls in one turn, then a text turn", 'safe'),
    row("20 'never' tool calls in one turn, then a text turn", 'never'),
    row("10 turns of one 'safe' call, then a text turn", 'turns'),
    '',
    `Solved from the four rows: **${overheadMs.perPrompt} ms** once per prompt`,
    '(ingress, invocation, state read, inbox),',
    `**${overheadMs.perTurn} ms** per turn (the journaled model step and the turn's state writes), per tool call`,
    `**${overheadMs.perToolCall.safe} ms** ('safe': one journaled step) and`,
    `**${overheadMs.perToolCall.never} ms** ('never': start marker + step).`,
    '',
  ].join('\n');
}

async function timed(body: () => Promise<void>): Promise<number> {
  const begin = performance.now();
  await body();
  return performance.now() - begin;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const results = await restateBenchmark(Number(process.env.BENCH_RESTATE_ROUNDS ?? 15));
  if (!results) throw new Error('bench/restate: restate-server is not in node_modules (npm ci installs it)');
  const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
  writeFileSync(here('./restate-results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(here('./restate-results.md'), renderRestateMarkdown(results));
  process.stdout.write(renderRestateMarkdown(results));
}
