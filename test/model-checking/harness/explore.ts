import {
  createEmptyActor,
  type ActorLogic,
  type AnyActorScope,
  type AnyEventObject,
  type AnyStateMachine,
  type InputFrom,
  type Snapshot,
} from 'xstate';
import { getAdjacencyMap, type TraversalOptions } from 'xstate/graph';
import { canonicalJson } from './canonical.js';

/**
 * Machine-level model checking on top of `xstate/graph`.
 *
 * A machine is walked through `machine.transition` (the real transitions, guards and `assign`s)
 * together with an explicit environment: the events the outside world may send in each state,
 * with payloads, including the `xstate.done.actor.*` events its invoked actors would send. The
 * invoked actors themselves are never started: their results are enumerated as events.
 *
 * Effects are observed through stand-in actions (provided with `.provide()`): while a transition
 * runs they call `record()`, so a path knows exactly which effects each step executed.
 */

/** One execution of a stand-in action during a transition, with what it saw. */
export interface Effect {
  action: string;
  detail: unknown;
}

let recording: Effect[] | null = null;

/** Called by stand-in actions; only valid while the explorer runs a transition. */
export function record(action: string, detail: unknown = null): void {
  if (!recording) throw new Error(`model checking: action "${action}" ran outside a transition`);
  recording.push({ action, detail });
}

/** A stand-in action that records its execution and, optionally, what it saw in the context. */
export function recorder<TContext, TParams = unknown>(
  action: string,
  detail?: (context: TContext, params: TParams, event: AnyEventObject) => unknown,
): (args: { context: TContext; event: AnyEventObject }, params: TParams) => void {
  return ({ context, event }, params) => record(action, detail ? detail(context, params, event) : null);
}

/**
 * The actor scope transitions run in. Built-in actions (spawning, sending, timers) are not
 * executed, so invoked actors never start and delayed events never fire on their own; custom
 * actions run, which is how the stand-ins record effects.
 */
function recordingScope(): AnyActorScope {
  const self = createEmptyActor();
  return {
    self,
    id: 'model-check',
    sessionId: 'model-check',
    logger: () => {},
    defer: () => {},
    emit: () => {},
    system: self.system,
    stopChild: () => {},
    actionExecutor: (action) => {
      if (!action.type.startsWith('xstate.') && action.exec) action.exec(action.info, action.params);
    },
  };
}

/** One move of the environment: an event with its payload (machine events, done events of invoked actors, timer events). */
export interface Move {
  /** Names the move in the alphabet, e.g. `reply:twoCalls`; unique among a state's moves. */
  label: string;
  event: AnyEventObject;
}

/** The world around a machine: which events it may send in a state, and what it remembers. */
export interface Environment<TMachine extends AnyStateMachine, TEnv> {
  initial: TEnv;
  moves(walk: Walk<TMachine, TEnv>): Move[];
  /** The environment's memory after a move (e.g. "ABORT was sent", "the batch was cancelled"). */
  remember(env: TEnv, move: Move, effects: readonly Effect[], next: MachineSnapshotOf<TMachine>): TEnv;
}

/** The machine's snapshot type (resolves through generics, unlike `SnapshotFrom`). */
export type MachineSnapshotOf<TMachine extends AnyStateMachine> = ReturnType<TMachine['transition']>;

/** A machine snapshot together with the environment's memory; itself a snapshot for xstate/graph. */
export type Walk<TMachine extends AnyStateMachine, TEnv> = WalkBody<TMachine, TEnv> & Snapshot<unknown>;

interface WalkBody<TMachine extends AnyStateMachine, TEnv> {
  snapshot: MachineSnapshotOf<TMachine>;
  env: TEnv;
  /**
   * Effects of the step that produced this walk. A graph node keeps the first walk that reached
   * its state, so read a step's effects from its edge, never from the node.
   */
  effects: readonly Effect[];
}

export interface GraphEvent {
  type: string;
  move: Move;
}

export interface GraphEdge {
  label: string;
  to: string;
  /** What the stand-in actions recorded during this step. */
  effects: readonly Effect[];
}

export interface GraphNode<TMachine extends AnyStateMachine, TEnv> {
  key: string;
  walk: Walk<TMachine, TEnv>;
  edges: GraphEdge[];
}

export interface StateGraph<TMachine extends AnyStateMachine, TEnv> {
  initial: string;
  /** Effects of the initial macrostep. */
  initialEffects: readonly Effect[];
  nodes: Map<string, GraphNode<TMachine, TEnv>>;
  edgeCount: number;
  /** The walk logic and traversal options given to xstate/graph, to run its other algorithms on. */
  logic: ActorLogic<Walk<TMachine, TEnv>, GraphEvent, undefined>;
  traversal: TraversalOptions<Walk<TMachine, TEnv>, GraphEvent, undefined>;
}

export interface ExploreOptions<TMachine extends AnyStateMachine> {
  input: InputFrom<TMachine>;
  /** Bound on visited states: exceeding it fails loudly instead of running forever. */
  limit: number;
}

/**
 * Every state reachable from the machine's initial state under the environment, as a graph.
 * States are identified by value + context + environment memory (`serializeState`), so two
 * histories that lead to the same state share their future.
 */
export function explore<TMachine extends AnyStateMachine, TEnv>(
  machine: TMachine,
  environment: Environment<TMachine, TEnv>,
  options: ExploreOptions<TMachine>,
): StateGraph<TMachine, TEnv> {
  type W = Walk<TMachine, TEnv>;
  type E = GraphEvent;
  const scope = recordingScope();
  const keys = new WeakMap<W, string>();
  const keyOf = (walk: W): string => {
    let key = keys.get(walk);
    if (key === undefined) {
      key = canonicalJson({
        value: walk.snapshot.value,
        context: walk.snapshot.context,
        status: walk.status,
        env: walk.env,
      });
      keys.set(walk, key);
    }
    return key;
  };
  // The walk mirrors the machine's status, output and error, so xstate/graph sees a snapshot.
  const walkOf = (snapshot: MachineSnapshotOf<TMachine>, env: TEnv, effects: Effect[]): W =>
    ({ snapshot, env, effects, status: snapshot.status, output: snapshot.output, error: snapshot.error }) as W;
  const run = <T>(body: () => T): [T, Effect[]] => {
    const effects: Effect[] = [];
    recording = effects;
    try {
      return [body(), effects];
    } finally {
      recording = null;
    }
  };

  const [initialSnapshot, initialEffects] = run(
    () => machine.getInitialSnapshot(scope, options.input) as MachineSnapshotOf<TMachine>,
  );
  const initial = walkOf(initialSnapshot, environment.initial, initialEffects);
  const logic: ActorLogic<W, E, undefined> = {
    transition: (walk, graphEvent) => {
      const [next, effects] = run(
        () => machine.transition(walk.snapshot, graphEvent.move.event, scope) as MachineSnapshotOf<TMachine>,
      );
      return walkOf(next, environment.remember(walk.env, graphEvent.move, effects, next), effects);
    },
    getInitialSnapshot: () => initial,
    getPersistedSnapshot: (walk) => walk,
  } as ActorLogic<W, E, undefined>;

  const traversal: TraversalOptions<W, E, undefined> = {
    fromState: initial,
    limit: options.limit,
    serializeState: (walk) => keyOf(walk),
    serializeEvent: (event) => event.type,
    events: (walk) =>
      walk.status === 'active' ? environment.moves(walk).map((move) => ({ type: move.label, move })) : [],
  };
  const adjacency = getAdjacencyMap(logic, traversal);

  const nodes = new Map<string, GraphNode<TMachine, TEnv>>();
  let edgeCount = 0;
  for (const [key, value] of Object.entries(adjacency)) {
    const transitions = Object.values(value.transitions) as Array<{ event: E; state: W }>;
    const edges = transitions.map(({ event, state }) => ({
      label: event.type,
      to: keyOf(state),
      effects: state.effects,
    }));
    edgeCount += edges.length;
    nodes.set(key, { key, walk: value.state, edges });
  }
  return { initial: keyOf(initial), initialEffects, nodes, edgeCount, logic, traversal };
}

/** The invocations active in a snapshot, by the state nodes XState reports as active. */
export function activeInvocations(snapshot: { _nodes: ReadonlyArray<unknown> }): Array<{ id: string; src: string }> {
  const invocations: Array<{ id: string; src: string }> = [];
  for (const node of snapshot._nodes as ReadonlyArray<{ invoke: ReadonlyArray<{ id: string; src: unknown }> }>) {
    for (const invoke of node.invoke)
      invocations.push({ id: invoke.id, src: typeof invoke.src === 'string' ? invoke.src : 'inline' });
  }
  return invocations;
}

/** The delayed (`after`) transitions active in a snapshot, as the events their timers would raise. */
export function activeDelays(snapshot: { _nodes: ReadonlyArray<unknown> }): Move[] {
  const moves: Move[] = [];
  for (const node of snapshot._nodes as ReadonlyArray<{
    after: ReadonlyArray<{ eventType: string; delay: string | number }>;
  }>) {
    for (const delayed of node.after)
      moves.push({ label: `after(${String(delayed.delay)})`, event: { type: delayed.eventType } });
  }
  return moves;
}

/** The done event an invoked actor sends with its output. */
export function doneEvent(invokeId: string, output: unknown): AnyEventObject {
  return { type: `xstate.done.actor.${invokeId}`, output };
}
