import { createAgent, type AgentEvent } from 'agentchart';
import { handLoop } from './hand-loop.js';
import type { Implementation } from './drivers.js';
import { macrotask, sampled, startClock, type Sampled, type Timing } from './stats.js';
import { benchTools, relayModel } from './workload.js';

/**
 * Progress relay: one turn of `tools` ticker calls, each awaiting `updates` progress updates.
 * A live subscriber counts every toolExecutionUpdate per call and checks they arrive in order.
 */

interface RelayRound {
  updatesPerSecond: number;
  /** Updates per second of process CPU time. */
  updatesPerCpuSecond: number;
  received: number;
  outOfOrder: number;
}

/** Checks each call's updates arrive as 0, 1, 2, … and counts them. */
class UpdateTally {
  readonly next = new Map<string, number>();
  received = 0;
  outOfOrder = 0;

  observe(event: AgentEvent): void {
    if (event.type !== 'toolExecutionUpdate') return;
    const expected = this.next.get(event.toolCallId) ?? 0;
    if (event.partial !== expected) this.outOfOrder++;
    this.next.set(event.toolCallId, expected + 1);
    this.received++;
  }
}

async function relayRound(implementation: Implementation, tools: number, updates: number): Promise<RelayRound> {
  const tally = new UpdateTally();
  const model = relayModel(tools, updates);
  let timing: Timing;
  let status: string;
  if (implementation === 'hand') {
    const clock = startClock();
    const result = await handLoop('go', { model, tools: benchTools, onEvent: (event) => tally.observe(event) });
    timing = clock.stop();
    status = result.status;
  } else {
    const agent = createAgent({ model, tools: benchTools });
    const subscription = agent.events.subscribe((event) => tally.observe(event));
    const clock = startClock();
    const result = await agent.prompt('go').result;
    timing = clock.stop();
    subscription.unsubscribe();
    status = result.status;
  }
  if (status !== 'completed') throw new Error(`bench relay (${implementation}): the run ended ${status}`);
  return {
    updatesPerSecond: tally.received / (timing.ms / 1000),
    updatesPerCpuSecond: tally.received / (timing.cpuMs / 1000),
    received: tally.received,
    outOfOrder: tally.outOfOrder,
  };
}

export interface RelayResult {
  tools: number;
  updatesPerTool: number;
  updatesPerSecond: Record<Implementation, Sampled>;
  updatesPerCpuSecond: Record<Implementation, Sampled>;
  /** agentchart / hand loop throughput. */
  ratio: number;
  /** Updates expected but not received, summed over every round of both implementations. */
  dropped: number;
  outOfOrder: number;
}

export async function relayBenchmark(
  tools: number,
  updates: number,
  rounds: number,
  warmups: number,
): Promise<RelayResult> {
  const samples: Record<Implementation, number[]> = { agentchart: [], hand: [] };
  const cpuSamples: Record<Implementation, number[]> = { agentchart: [], hand: [] };
  let dropped = 0;
  let outOfOrder = 0;
  for (let round = 0; round < warmups + rounds; round++) {
    const order: Implementation[] = round % 2 === 0 ? ['agentchart', 'hand'] : ['hand', 'agentchart'];
    for (const implementation of order) {
      const result = await relayRound(implementation, tools, round < warmups ? Math.min(updates, 10_000) : updates);
      if (round >= warmups) {
        samples[implementation].push(result.updatesPerSecond);
        cpuSamples[implementation].push(result.updatesPerCpuSecond);
        dropped += tools * updates - result.received;
        outOfOrder += result.outOfOrder;
      }
      await macrotask();
    }
  }
  const agentchart = sampled(samples.agentchart, 0);
  const hand = sampled(samples.hand, 0);
  return {
    tools,
    updatesPerTool: updates,
    updatesPerSecond: { agentchart, hand },
    updatesPerCpuSecond: { agentchart: sampled(cpuSamples.agentchart, 0), hand: sampled(cpuSamples.hand, 0) },
    ratio: Number((agentchart.median / hand.median).toFixed(2)),
    dropped,
    outOfOrder,
  };
}
