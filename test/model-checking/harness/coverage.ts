import type { AnyStateMachine } from 'xstate';
import { allStates, chartOf } from '../../../src/viz/chart.js';
import type { StateGraph } from './explore.js';

/**
 * The leaf states a machine can rest in, read from its definition: every atomic or final state
 * except those left at once by an unguarded `always` transition (they are never observed).
 */
export function restingStates(machine: AnyStateMachine): string[] {
  return allStates(chartOf(machine))
    .filter((state) => state.type === 'atomic' || state.type === 'final')
    .filter(
      (state) => !state.transitions.some((transition) => transition.kind === 'always' && transition.guard === null),
    )
    .map((state) => state.id)
    .sort();
}

/** The leaf states the exploration visited. */
export function visitedStates<TMachine extends AnyStateMachine, TEnv>(graph: StateGraph<TMachine, TEnv>): Set<string> {
  const visited = new Set<string>();
  for (const node of graph.nodes.values()) {
    for (const stateNode of (node.walk.snapshot as unknown as { _nodes: ReadonlyArray<{ id: string; type: string }> })
      ._nodes) {
      if (stateNode.type === 'atomic' || stateNode.type === 'final') visited.add(stateNode.id);
    }
  }
  return visited;
}
