import {
  assign,
  createActor,
  fromPromise,
  setup,
  type ActorLogic,
  type EventObject,
  type InspectionEvent,
  type Snapshot,
} from 'xstate';
import { createAgent } from 'agentchart';
import { expectWork, interleave, timeTurns, type TimedRun } from './drivers.js';
import { median, startClock } from './stats.js';
import { benchTools, turnsModel } from './workload.js';
import { agentchartMachines, countAssignsOf, xstateCounter, type XStateCounts } from './xstate-counts.js';

/**
 * The floor XState v5 sets under agentchart's turn (bench/README.md, "The XState floor"): the
 * least actor work one turn of our charts does, with every effect a no-op — the master invoking
 * a turn actor per turn; the turn entering through an eventless transition, invoking its model
 * call (a promise actor resolved at once) and spawning one tool-call actor (a light actor logic,
 * as agentchart's), recording each output with an assign, and ending. That is 3 actors, 9 events
 * and the same macrosteps as agentchart's turn (bench/experiments: counted with `inspect`).
 * Beside it, the parts: an actor created and started, one transition with an assign; and pi's
 * whole turn in the same process for scale.
 *
 *   npx tsx bench/xstate-floor.ts [rounds]
 */

const TURNS = 200;

type CallSnapshot = Snapshot<number> & { value: 'starting' | 'executing' | 'done' };
/** A tool-call actor as agentchart's: started after the step, then its tool answers at once. */
const callLogic: ActorLogic<CallSnapshot, EventObject, number> = {
  getInitialSnapshot: () => ({ status: 'active', output: undefined, error: undefined, value: 'starting' }),
  start: (_snapshot, { self }) => queueMicrotask(() => self.send({ type: 'STEP_ENDED' })),
  transition: (snapshot, event, { self }) => {
    if (snapshot.status !== 'active') return snapshot;
    if (event.type === 'STEP_ENDED') {
      queueMicrotask(() => self.send({ type: 'RETURNED' }));
      return { ...snapshot, value: 'executing' };
    }
    if (event.type === 'RETURNED') return { status: 'done', output: 1, error: undefined, value: 'done' };
    return snapshot;
  },
  getPersistedSnapshot: (snapshot) => snapshot,
};

const noop = () => {};

/** The turn: 12 context keys like agentchart's, the hot path of a tool turn and of an answer. */
const turnLogic = setup({
  types: {
    input: {} as { turnIndex: number; answer: boolean },
    context: {} as Record<string, unknown> & { input: { turnIndex: number; answer: boolean }; settled: number },
  },
  actors: {
    callModel: fromPromise<{ calls: number }, { answer: boolean }>(async ({ input }) => ({
      calls: input.answer ? 0 : 1,
    })),
    call: callLogic,
  },
  actions: { announceTurnStart: noop, publishAssistantMessage: noop, commitTurn: noop, announceTurnEnd: noop },
}).createMachine({
  context: ({ input }) => ({
    input,
    reply: null,
    prepared: [],
    settled: 0,
    batch: null,
    ending: null,
    steered: false,
    inputInjected: [],
    injected: [],
    assistant: null,
    decision: null,
    asked: [],
  }),
  initial: 'checking',
  states: {
    checking: { always: { target: 'assistant', actions: 'announceTurnStart' } },
    assistant: {
      invoke: {
        src: 'callModel',
        input: ({ context }) => ({ answer: context.input.answer }),
        onDone: [
          {
            guard: ({ event }) => event.output.calls > 0,
            target: 'running',
            actions: [
              assign({ reply: ({ event }) => event.output, batch: () => ({ running: 1 }) }),
              'publishAssistantMessage',
              // As agentchart's startCalls: a child of the turn, in its system.
              ({ self }) => void createActor(callLogic, { parent: self, id: 'call.0', input: 0 }).start(),
            ],
          },
          { target: 'done', actions: [assign({ reply: ({ event }) => event.output }), 'commitTurn'] },
        ],
      },
    },
    running: {
      on: {
        'xstate.done.actor.*': {
          target: 'done',
          actions: [
            assign({ settled: ({ context }) => context.settled + 1, ending: () => 'toolsExecuted' }),
            'commitTurn',
          ],
        },
      },
    },
    done: { type: 'final', entry: 'announceTurnEnd' },
  },
  output: ({ context }) => ({ settled: context.settled }),
});

/** The master: a turn per turn index, re-entered at once after a tool turn (agentchart's hot path). */
const masterLogic = setup({
  types: {
    input: {} as { turns: number },
    context: {} as { turns: number; turnIndex: number; counts: { turnsThisRun: number } },
  },
  actors: { turn: turnLogic },
}).createMachine({
  context: ({ input }) => ({ turns: input.turns, turnIndex: 0, counts: { turnsThisRun: 0 } }),
  initial: 'turn',
  states: {
    turn: {
      invoke: {
        src: 'turn',
        input: ({ context }) => ({ turnIndex: context.turnIndex, answer: context.turnIndex === context.turns }),
        onDone: [
          {
            guard: ({ context }) => context.turnIndex < context.turns,
            target: 'turn',
            reenter: true,
            actions: assign(({ context }) => ({
              turnIndex: context.turnIndex + 1,
              counts: { turnsThisRun: context.counts.turnsThisRun + 1 },
            })),
          },
          { target: 'ended' },
        ],
      },
    },
    ended: { type: 'final' },
  },
});

export function runSkeleton(turns: number, inspect?: (event: InspectionEvent) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const actor = createActor(masterLogic, { input: { turns }, ...(inspect ? { inspect } : {}) });
    actor.subscribe({
      complete: () => {
        const { turnIndex } = actor.getSnapshot().context;
        if (turnIndex === turns) resolve();
        else reject(new Error(`xstate floor: the skeleton ran ${turnIndex + 1} turns, not ${turns + 1}`));
      },
      error: reject,
    });
    actor.start();
  });
}

/** An actor of a one-state machine with 12 context keys, created and started (then stopped). */
const bare = setup({ types: { context: {} as Record<string, unknown> } }).createMachine({
  context: () => ({ a: 0, b: null, c: [], d: 0, e: null, f: null, g: false, h: [], i: [], j: null, k: null, l: [] }),
  initial: 'idle',
  states: { idle: { on: { GO: { actions: assign({ a: ({ context }) => (context.a as number) + 1 }) } } } },
});

function perActor(n: number): void {
  for (let i = 0; i < n; i++) createActor(bare).start().stop();
}

function perTransition(n: number): void {
  const actor = createActor(bare).start();
  const go = { type: 'GO' } as const;
  for (let i = 0; i < n; i++) actor.send(go);
  actor.stop();
}

interface Figure {
  wallUs: number;
  cpuUs: number;
}

async function measure(units: number, work: () => void | Promise<void>): Promise<Figure> {
  const clock = startClock();
  await work();
  const { ms, cpuMs } = clock.stop();
  return { wallUs: (ms * 1000) / units, cpuUs: (cpuMs * 1000) / units };
}

/** What one turn asks of XState (T=200 × K=1): agentchart's turn and the skeleton's, counted the same way. */
export async function turnCounts(turns = TURNS): Promise<{ agentchart: XStateCounts; skeleton: XStateCounts }> {
  for (const machine of [...(await agentchartMachines()), masterLogic, turnLogic]) countAssignsOf(machine);
  const ours = xstateCounter();
  const agent = createAgent({ model: turnsModel(turns, 1), tools: benchTools, inspect: ours.inspect });
  const result = await agent.prompt('go').result;
  if (result.status !== 'completed') throw new Error(`xstate floor: the counted session ended ${result.status}`);
  const agentchart = ours.per(turns + 1);
  const skeleton = xstateCounter();
  await runSkeleton(turns, skeleton.inspect);
  return { agentchart, skeleton: skeleton.per(turns + 1) };
}

export type FloorContender = 'agentchart' | 'skeleton' | 'pi';

export interface FloorResult {
  /** agentchart's own turn and the skeleton's, counted (not timed). */
  counts: XStateCounts;
  skeletonCounts: XStateCounts;
  /** The skeleton turn (3 actors, 9 events), µs per turn. */
  skeletonTurn: Figure;
  /** One machine actor (12 context keys) created, started and stopped. */
  actor: Figure;
  /** One event, one transition with an assign, on a started actor. */
  transition: Figure;
  /** pi's agent core and agentchart, T=200 × K=1, µs per turn, in the same rounds as the skeleton. */
  piTurn: Figure;
  agentchartTurn: Figure;
  /** agentchart / skeleton per turn: medians (wall, CPU) and the median of the per-round ratios (wall). */
  overSkeleton: { wall: number; cpu: number; paired: number };
  rounds: number;
}

/**
 * agentchart, the skeleton and pi in interleaved rounds (balanced orders), each a session of
 * T=200 × K=1; then the parts (an actor's life, one transition), and the counts.
 */
export async function xstateFloor(rounds: number, warmups = 2): Promise<FloorResult> {
  const contenders: readonly FloorContender[] = ['agentchart', 'skeleton', 'pi'];
  const samples = await interleave(contenders, rounds, warmups, async (contender) => {
    if (contender === 'skeleton') return measure(TURNS + 1, () => runSkeleton(TURNS));
    let run: TimedRun | null = null;
    const figure = await measure(TURNS + 1, async () => void (run = await timeTurns(contender, TURNS, 1)));
    expectWork(`xstate floor ${contender}`, run as unknown as TimedRun, TURNS + 1, TURNS);
    return figure;
  });
  const parts = { actor: [] as Figure[], transition: [] as Figure[] };
  for (let round = 0; round < rounds + warmups; round++) {
    const actor = await measure(2_000, () => perActor(2_000));
    const transition = await measure(20_000, () => perTransition(20_000));
    if (round < warmups) continue;
    parts.actor.push(actor);
    parts.transition.push(transition);
  }
  const med = (figures: Figure[]): Figure => ({
    wallUs: median(figures.map((f) => f.wallUs)),
    cpuUs: median(figures.map((f) => f.cpuUs)),
  });
  const agentchartTurn = med(samples.agentchart);
  const skeletonTurn = med(samples.skeleton);
  const ratio = (a: number, b: number) => Number((a / b).toFixed(2));
  const paired = samples.agentchart.map((f, round) => f.wallUs / (samples.skeleton[round] as Figure).wallUs);
  const counts = await turnCounts();
  return {
    counts: counts.agentchart,
    skeletonCounts: counts.skeleton,
    skeletonTurn,
    actor: med(parts.actor),
    transition: med(parts.transition),
    piTurn: med(samples.pi),
    agentchartTurn,
    overSkeleton: {
      wall: ratio(agentchartTurn.wallUs, skeletonTurn.wallUs),
      cpu: ratio(agentchartTurn.cpuUs, skeletonTurn.cpuUs),
      paired: ratio(median(paired), 1),
    },
    rounds,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await xstateFloor(Number(process.argv[2] ?? 12));
  const row = (name: string, f: Figure) =>
    `${name.padEnd(44)} ${f.wallUs.toFixed(2).padStart(8)} µs  CPU ${f.cpuUs.toFixed(2)}`;
  console.log(row('skeleton turn (3 actors, 9 events) per turn', result.skeletonTurn));
  console.log(row('machine actor created + started + stopped', result.actor));
  console.log(row('one transition with an assign', result.transition));
  console.log(row('pi agent core, per turn (T=200 × K=1)', result.piTurn));
  console.log(row('agentchart, per turn (T=200 × K=1)', result.agentchartTurn));
  console.log('agentchart, per turn:', result.counts);
  console.log('skeleton, per turn:', result.skeletonCounts);
  console.log('agentchart / skeleton:', result.overSkeleton);
}
