import { createAgent, type AgentEvent, type AgentOptions, type RunResult } from 'agentchart';
import type { ScriptedModel } from 'agentchart/testing';
import { handLoop, type HandLoopResult } from './hand-loop.js';
import { macrotask, startClock, type Timing } from './stats.js';
import { benchTools } from './workload.js';

/** One timed session of either implementation, from prompt to result (agent creation excluded). */

export type Implementation = 'agentchart' | 'hand';

export interface TimedRun {
  ms: number;
  /** CPU time of the process (all threads, GC helpers included) over the run. */
  cpuMs: number;
  status: string;
  turns: number;
  toolCallsExecuted: number;
}

export type AgentExtras = Pick<AgentOptions, 'inspect' | 'otel'>;

export async function timeAgentchart(model: ScriptedModel, extras: AgentExtras = {}): Promise<TimedRun> {
  const agent = createAgent({ model, tools: benchTools, ...extras });
  const clock = startClock();
  const result: RunResult = await agent.prompt('go').result;
  return { ...clock.stop(), status: result.status, turns: result.counters.turns, toolCallsExecuted: result.counters.toolCallsExecuted };
}

export async function timeHand(model: ScriptedModel): Promise<TimedRun> {
  const clock = startClock();
  const result: HandLoopResult = await handLoop('go', { model, tools: benchTools });
  return { ...clock.stop(), status: result.status, turns: result.counters.turns, toolCallsExecuted: result.counters.toolCallsExecuted };
}

export function timeRun(implementation: Implementation, model: ScriptedModel, extras: AgentExtras = {}): Promise<TimedRun> {
  return implementation === 'agentchart' ? timeAgentchart(model, extras) : timeHand(model);
}

/** Fails the benchmark loudly when a run did not do the work it was timed for. */
export function expectWork(label: string, run: TimedRun, turns: number, toolCalls: number): void {
  if (run.status !== 'completed' || run.turns !== turns || run.toolCallsExecuted !== toolCalls) {
    throw new Error(
      `bench ${label}: expected completed, ${turns} turns, ${toolCalls} tool calls; got ${run.status}, ${run.turns} turns, ${run.toolCallsExecuted} tool calls`,
    );
  }
}

/**
 * Runs `once` for both implementations, alternating which goes first, so machine load (the
 * machine is shared) hits both alike. Warm-up rounds are discarded.
 */
export async function alternate(
  rounds: number,
  warmups: number,
  once: (implementation: Implementation) => Promise<Timing>,
): Promise<Record<Implementation, Timing[]>> {
  const samples: Record<Implementation, Timing[]> = { agentchart: [], hand: [] };
  for (let round = 0; round < warmups + rounds; round++) {
    const order: Implementation[] = round % 2 === 0 ? ['agentchart', 'hand'] : ['hand', 'agentchart'];
    for (const implementation of order) {
      const value = await once(implementation);
      if (round >= warmups) samples[implementation].push(value);
      // Lets timers and I/O of other work run between samples rather than inside one.
      await macrotask();
    }
  }
  return samples;
}

/** The event types of a session of each implementation, for the same script (the parity check). */
export async function eventTypesOf(implementation: Implementation, model: ScriptedModel): Promise<string[]> {
  if (implementation === 'hand') {
    const result = await handLoop('go', { model, tools: benchTools });
    return result.events.map((event) => event.type);
  }
  const run = createAgent({ model, tools: benchTools }).prompt('go');
  await run.result;
  const events: AgentEvent[] = [];
  run.events.subscribe((event) => events.push(event)).unsubscribe();
  return events.map((event) => event.type);
}
