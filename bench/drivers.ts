import { createAgent, type AgentEvent, type AgentOptions, type RunResult } from 'agentchart';
import type { ScriptedModel } from 'agentchart/testing';
import { prepareAiSdk } from './ai-sdk-driver.js';
import { handLoop, type HandLoopResult } from './hand-loop.js';
import { preparePi } from './pi-driver.js';
import { macrotask, startClock, type Timing } from './stats.js';
import { benchTools, turnsModel, type ArgumentsKind, type WorkDone } from './workload.js';

/** One timed session of any implementation, from prompt to result (agent creation excluded). */

/** agentchart and the hand-written loop built from agentchart's own parts (the baseline). */
export type Implementation = 'agentchart' | 'hand';

/**
 * Other agent libraries run on the same workload, in the same process (devDependencies): pi's agent
 * core, the AI SDK's `streamText` (streaming, like agentchart) and its `generateText` (no streaming).
 */
export type Peer = 'pi' | 'aiSdk' | 'aiSdkGenerate';

export type Contender = Implementation | Peer;

export const PEERS: readonly Peer[] = ['pi', 'aiSdk', 'aiSdkGenerate'];
export const CONTENDERS: readonly Contender[] = ['agentchart', 'hand', ...PEERS];

/** Wall-clock and process CPU time of the session (GC helpers included); the work done, as its library reports it. */
export interface TimedRun extends Timing, WorkDone {}

export type AgentExtras = Pick<AgentOptions, 'inspect' | 'otel'>;

export async function timeAgentchart(model: ScriptedModel, extras: AgentExtras = {}): Promise<TimedRun> {
  const agent = createAgent({ model, tools: benchTools, ...extras });
  const clock = startClock();
  const result: RunResult = await agent.prompt('go').result;
  return {
    ...clock.stop(),
    status: result.status,
    turns: result.counters.turns,
    toolCallsExecuted: result.counters.toolCallsExecuted,
  };
}

export async function timeHand(model: ScriptedModel): Promise<TimedRun> {
  const clock = startClock();
  const result: HandLoopResult = await handLoop('go', { model, tools: benchTools });
  return {
    ...clock.stop(),
    status: result.status,
    turns: result.counters.turns,
    toolCallsExecuted: result.counters.toolCallsExecuted,
  };
}

export function timeRun(
  implementation: Implementation,
  model: ScriptedModel,
  extras: AgentExtras = {},
): Promise<TimedRun> {
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
 * Builds a session of a peer library for the T×K workload (untimed) and returns its timed part.
 * Each adapter is described in bench/README.md (what it validates, what its scripted model streams).
 */
const peerSessions: Record<Peer, (turns: number, calls: number, kind: ArgumentsKind) => () => Promise<WorkDone>> = {
  pi: preparePi,
  aiSdk: (turns, calls, kind) => prepareAiSdk('stream', turns, calls, kind),
  aiSdkGenerate: (turns, calls, kind) => prepareAiSdk('generate', turns, calls, kind),
};

/**
 * T turns of K instant tool calls then a text answer, on any contender; creating the agent is not
 * timed. With `invalid` arguments every call must be rejected by the library's validation.
 */
export async function timeTurns(
  contender: Contender,
  turns: number,
  calls: number,
  kind: ArgumentsKind = 'valid',
  /** agentchart and the hand loop: called as each model call starts (the peers' models are not stamped). */
  onCall?: (callIndex: number) => void,
): Promise<TimedRun> {
  if (contender === 'agentchart' || contender === 'hand')
    return timeRun(contender, turnsModel(turns, calls, onCall, kind));
  const session = peerSessions[contender](turns, calls, kind);
  const clock = startClock();
  const work = await session();
  return { ...clock.stop(), ...work };
}

/**
 * The orders of a Williams design: every contender runs once per round, and over a cycle of rounds
 * each takes every position and follows every other contender equally often, so neither the
 * machine's load nor the garbage one run leaves to the next one's GC favours anyone. Two contenders
 * alternate; four make a cycle of 4 rounds, five (an odd count needs 2n) a cycle of 10.
 */
export function balancedOrders<C>(contenders: readonly C[]): C[][] {
  const n = contenders.length;
  // First row 0, 1, n−1, 2, n−2, …; row r adds r (mod n).
  const first = Array.from({ length: n }, (_, j) => (j % 2 === 1 ? (j + 1) / 2 : (n - j / 2) % n));
  const rows = Array.from({ length: n }, (_, r) => first.map((j) => contenders[(j + r) % n] as C));
  return n % 2 === 0 ? rows : [...rows, ...rows.map((row) => [...row].reverse())];
}

/**
 * Runs `once` for every contender in every round, in the orders of `balancedOrders`. Warm-up rounds
 * are discarded; sample i of every contender comes from the same round i (the paired ratios use it).
 */
export async function interleave<C extends string, T>(
  contenders: readonly C[],
  rounds: number,
  warmups: number,
  once: (contender: C) => Promise<T>,
): Promise<Record<C, T[]>> {
  const orders = balancedOrders(contenders);
  const samples = Object.fromEntries(contenders.map((contender) => [contender, [] as T[]])) as Record<C, T[]>;
  for (let round = 0; round < warmups + rounds; round++) {
    for (const contender of orders[round % orders.length] as C[]) {
      const value = await once(contender);
      if (round >= warmups) samples[contender].push(value);
      // Lets timers and I/O of other work run between samples rather than inside one.
      await macrotask();
    }
  }
  return samples;
}

/**
 * Runs `once` for both implementations, alternating which goes first, so machine load (the
 * machine is shared) hits both alike. Warm-up rounds are discarded.
 */
export function alternate(
  rounds: number,
  warmups: number,
  once: (implementation: Implementation) => Promise<Timing>,
): Promise<Record<Implementation, Timing[]>> {
  return interleave<Implementation, Timing>(['agentchart', 'hand'], rounds, warmups, once);
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
