import { createAgent } from 'agentchart';
import { handLoop } from './hand-loop.js';
import { relayModel, stalledModel, benchTools, turnsModel } from './workload.js';

/**
 * One benchmark workload in a loop, for a CPU profile (see bench/README.md):
 *   node --cpu-prof --cpu-prof-dir=bench/profiles --import tsx bench/profile.ts <workload> [seconds] [hand]
 * Workloads: perTurn (T=200 × K=1), perTool (T=50 × K=20), batch1000 (K=1,000), history (2,000 turns),
 * sessions (1,000 idle sessions prompted then aborted), relay (3 × 100,000 updates), create (createAgent).
 * `hand` profiles the hand-written loop instead of agentchart.
 */

const workloads = {
  perTurn: () => turns(200, 1),
  perTool: () => turns(50, 20),
  batch1000: () => turns(1, 1_000),
  history: () => turns(2_000, 1),
  relay: async () => {
    await (hand ? handLoop('go', { model: relayModel(3, 100_000), tools: benchTools }) : createAgent({ model: relayModel(3, 100_000), tools: benchTools }).prompt('go').result);
  },
  sessions: async () => {
    const agents = Array.from({ length: 1_000 }, () => createAgent({ model: stalledModel(), tools: benchTools }));
    const results = agents.map((agent) => agent.prompt('hello').result);
    await new Promise((resolve) => setImmediate(resolve));
    for (const agent of agents) agent.abort();
    await Promise.all(results);
  },
  create: async () => {
    const model = turnsModel(0, 0);
    for (let i = 0; i < 1_000; i++) createAgent({ model, tools: benchTools });
  },
} satisfies Record<string, () => Promise<void>>;

type Workload = keyof typeof workloads;

const name = process.argv[2] as Workload | undefined;
const seconds = Number(process.argv[3] ?? 10);
const hand = process.argv.includes('hand');
if (!name || !(name in workloads)) {
  process.stderr.write(`usage: bench/profile.ts <${Object.keys(workloads).join('|')}> [seconds] [hand]\n`);
  process.exit(2);
}

async function turns(count: number, calls: number): Promise<void> {
  const model = turnsModel(count, calls);
  const result = hand ? await handLoop('go', { model, tools: benchTools }) : await createAgent({ model, tools: benchTools }).prompt('go').result;
  if (result.status !== 'completed') throw new Error(`profile: the run ended ${result.status}`);
}

const deadline = performance.now() + seconds * 1000;
let iterations = 0;
while (performance.now() < deadline) {
  await workloads[name]();
  iterations++;
}
process.stderr.write(`profile: ${name}${hand ? ' (hand loop)' : ''} ran ${iterations} times in ${seconds} s\n`);
