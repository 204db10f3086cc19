import { createAgent } from 'agentchart';
import {
  alternate,
  CONTENDERS,
  eventTypesOf,
  expectWork,
  interleave,
  PEERS,
  timeAgentchart,
  timeRun,
  timeTurns,
  type AgentExtras,
  type Contender,
  type Implementation,
  type Peer,
} from './drivers.js';
import { macrotask, median, sampled, type Sampled, type Timing } from './stats.js';
import { benchTools, turnsModel } from './workload.js';

/** Per-turn, per-tool, batch-scaling, history-growth and inspection benchmarks. */

export interface Comparison {
  unit: string;
  /** Wall-clock time per unit. */
  agentchart: Sampled;
  hand: Sampled;
  /** agentchart median / hand-loop median. */
  ratio: number;
  /** agentchart median − hand-loop median. */
  overhead: number;
  /** Process CPU time per unit (less sensitive to the machine's load than the wall clock). */
  cpu: { agentchart: Sampled; hand: Sampled; ratio: number };
  /** The other libraries on the same workload, in the same rounds. */
  peers: Record<Peer, PeerFigures>;
}

/** One peer library's figures on a workload, and agentchart's ratios to it (below 1: agentchart is faster). */
export interface PeerFigures {
  wall: Sampled;
  cpu: Sampled;
  /** agentchart median / peer median, wall clock. */
  ratio: number;
  /** agentchart median / peer median, process CPU time. */
  cpuRatio: number;
  /** Median over rounds of agentchart / peer within the same round (both ran seconds apart), wall clock. */
  pairedRatio: number;
}

const ratioOf = (a: number, b: number) => Number((a / b).toFixed(2));

function compared(unit: string, samples: Record<Contender, Timing[]>, units: number): Comparison {
  const perUnit = (contender: Contender, pick: (t: Timing) => number) =>
    samples[contender].map((t) => (pick(t) * 1000) / units);
  const per = (contender: Contender, pick: (t: Timing) => number) => sampled(perUnit(contender, pick));
  const agentchart = per('agentchart', (t) => t.ms);
  const hand = per('hand', (t) => t.ms);
  const cpuAgentchart = per('agentchart', (t) => t.cpuMs);
  const cpuHand = per('hand', (t) => t.cpuMs);
  const peer = (name: Peer): PeerFigures => {
    const wall = per(name, (t) => t.ms);
    const cpu = per(name, (t) => t.cpuMs);
    const ours = perUnit('agentchart', (t) => t.ms);
    const theirs = perUnit(name, (t) => t.ms);
    const paired = ours.map((value, round) => value / (theirs[round] as number));
    return {
      wall,
      cpu,
      ratio: ratioOf(agentchart.median, wall.median),
      cpuRatio: ratioOf(cpuAgentchart.median, cpu.median),
      pairedRatio: ratioOf(median(paired), 1),
    };
  };
  return {
    unit,
    agentchart,
    hand,
    ratio: ratioOf(agentchart.median, hand.median),
    overhead: Number((agentchart.median - hand.median).toFixed(2)),
    cpu: { agentchart: cpuAgentchart, hand: cpuHand, ratio: ratioOf(cpuAgentchart.median, cpuHand.median) },
    peers: Object.fromEntries(PEERS.map((name) => [name, peer(name)])) as Record<Peer, PeerFigures>,
  };
}

/**
 * T turns of K instant tool calls, then a text answer; agentchart, the hand loop, pi and the AI SDK
 * in interleaved rounds. `per` chooses the unit: µs per turn (all T+1 turns), µs per tool call
 * (T×K calls, turn costs included) or µs per session.
 */
export async function turnsBenchmark(
  turns: number,
  calls: number,
  per: 'turn' | 'toolCall' | 'session',
  rounds: number,
  warmups: number,
): Promise<Comparison> {
  const samples = await interleave(CONTENDERS, rounds, warmups, async (contender) => {
    const run = await timeTurns(contender, turns, calls);
    expectWork(`${contender} T=${turns} K=${calls}`, run, turns + 1, turns * calls);
    return run;
  });
  const units = {
    turn: ['µs/turn', turns + 1],
    toolCall: ['µs/tool call', turns * calls],
    session: ['µs/session', 1],
  } as const;
  return compared(units[per][0], samples, units[per][1]);
}

export interface HistoryGrowth {
  turns: number;
  /** µs per turn over the first 100 and the last 100 turns of the session (wall clock). */
  first100: Record<Implementation, Sampled>;
  last100: Record<Implementation, Sampled>;
  /** Median over runs of (last-100 time / first-100 time), wall clock. */
  ratio: Record<Implementation, number>;
  /** The same ratio on process CPU time, which other processes' load disturbs less. */
  cpuRatio: Record<Implementation, number>;
  /** µs per turn of the whole session (all T+1 turns), every contender in interleaved rounds. */
  perTurn: Comparison;
}

/** One session of `turns` turns (K=1); model-call timestamps split the first and last 100 turns. */
export async function historyGrowth(
  turns: number,
  rounds: number,
  warmups: number,
  peerRounds: number,
): Promise<HistoryGrowth> {
  const window = 100;
  const both = <T>(make: () => T): Record<Implementation, T> => ({ agentchart: make(), hand: make() });
  const first = both((): number[] => []);
  const last = both((): number[] => []);
  const ratios = both((): number[] => []);
  const cpuRatios = both((): number[] => []);
  await alternate(rounds, warmups, async (implementation) => {
    const wall: number[] = [];
    const cpu: number[] = [];
    const stamp = (callIndex: number) => {
      wall[callIndex] = performance.now();
      const used = process.cpuUsage();
      cpu[callIndex] = (used.user + used.system) / 1000;
    };
    const run = await timeRun(implementation, turnsModel(turns, 1, stamp));
    expectWork(`${implementation} history`, run, turns + 1, turns);
    // Turn i spans model call i to model call i+1.
    const span = (stamps: number[], from: number) =>
      (((stamps[from + window] as number) - (stamps[from] as number)) * 1000) / window;
    first[implementation].push(span(wall, 0));
    last[implementation].push(span(wall, turns - window));
    ratios[implementation].push(span(wall, turns - window) / span(wall, 0));
    cpuRatios[implementation].push(span(cpu, turns - window) / span(cpu, 0));
    return run;
  });
  const ratio = (samples: number[]) => Number(median(samples).toFixed(2));
  return {
    turns,
    first100: { agentchart: sampled(first.agentchart), hand: sampled(first.hand) },
    last100: { agentchart: sampled(last.agentchart), hand: sampled(last.hand) },
    ratio: { agentchart: ratio(ratios.agentchart), hand: ratio(ratios.hand) },
    cpuRatio: { agentchart: ratio(cpuRatios.agentchart), hand: ratio(cpuRatios.hand) },
    // The same session on every contender; few rounds: the AI SDK's steps make a long session slow on its side.
    perTurn: await turnsBenchmark(turns, 1, 'turn', peerRounds, 0),
  };
}

export interface InspectionCost {
  unit: string;
  workload: string;
  off: Sampled;
  on: Sampled;
  /** on / off. */
  ratio: number;
  /** on / off, process CPU time. */
  cpuRatio: number;
}

/** agentchart with a no-op XState inspection observer against none, alternating. */
export async function inspectionCost(
  turns: number,
  calls: number,
  rounds: number,
  warmups: number,
): Promise<InspectionCost> {
  const inspect: AgentExtras = { inspect: () => {} };
  const samples = { on: [] as number[], off: [] as number[] };
  const cpu = { on: [] as number[], off: [] as number[] };
  for (let round = 0; round < warmups + rounds; round++) {
    const order = round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
    for (const mode of order) {
      const run = await timeAgentchart(turnsModel(turns, calls), mode === 'on' ? inspect : {});
      expectWork(`inspection ${mode}`, run, turns + 1, turns * calls);
      if (round >= warmups) {
        samples[mode].push((run.ms * 1000) / (turns + 1));
        cpu[mode].push(run.cpuMs);
      }
      await macrotask();
    }
  }
  const on = sampled(samples.on);
  const off = sampled(samples.off);
  const ratio = (a: number, b: number) => Number((a / b).toFixed(2));
  return {
    unit: 'µs/turn',
    workload: `T=${turns} × K=${calls}`,
    off,
    on,
    ratio: ratio(on.median, off.median),
    cpuRatio: ratio(median(cpu.on), median(cpu.off)),
  };
}

/** createAgent itself (options, tool registry, machine provide()), µs per agent. */
export async function agentCreation(count: number, rounds: number): Promise<Sampled> {
  const samples: number[] = [];
  for (let round = 0; round < rounds + 1; round++) {
    const model = turnsModel(0, 0);
    const start = performance.now();
    for (let i = 0; i < count; i++) createAgent({ model, tools: benchTools });
    if (round > 0) samples.push(((performance.now() - start) * 1000) / count);
    await macrotask();
  }
  return sampled(samples);
}

/** Both implementations publish the same event types in the same order for the same script. */
export async function parityCheck(): Promise<{
  ok: boolean;
  agentchart: number;
  hand: number;
  firstDifference: number;
}> {
  const agentchart = await eventTypesOf('agentchart', turnsModel(3, 2));
  const hand = await eventTypesOf('hand', turnsModel(3, 2));
  let firstDifference = -1;
  for (let i = 0; i < Math.max(agentchart.length, hand.length); i++) {
    if (agentchart[i] !== hand[i]) {
      firstDifference = i;
      break;
    }
  }
  return { ok: firstDifference === -1, agentchart: agentchart.length, hand: hand.length, firstDifference };
}

/**
 * Every contender validates tool arguments on its normal path: a session of 1 turn × 2 calls whose
 * `i` is a string must end normally with both calls rejected (none executed) by each library.
 */
export async function validationCheck(): Promise<Record<Contender, boolean>> {
  const verdicts = {} as Record<Contender, boolean>;
  for (const contender of CONTENDERS) {
    const run = await timeTurns(contender, 1, 2, 'invalid');
    verdicts[contender] = run.status === 'completed' && run.turns === 2 && run.toolCallsExecuted === 0;
  }
  return verdicts;
}
