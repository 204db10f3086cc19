import type { AnyStateMachine } from 'xstate';
import type { MachineOutlineNode } from './format.js';

/** The parts of an XState StateNode the outline reads. */
interface StateNodeView {
  id: string;
  key: string;
  type: MachineOutlineNode['type'];
  states: Record<string, StateNodeView>;
}

/** The state tree of a machine (ids, keys, types), in definition order: what a trace needs to draw it. */
export function machineOutline(machine: AnyStateMachine): MachineOutlineNode {
  return outlineOf(machine.root as unknown as StateNodeView);
}

function outlineOf(node: StateNodeView): MachineOutlineNode {
  return { id: node.id, key: node.key, type: node.type, states: Object.values(node.states).map(outlineOf) };
}

/** Whether an actor's logic is a state machine (promise and callback actors have no states to record). */
export function isStateMachine(logic: unknown): logic is AnyStateMachine {
  if (typeof logic !== 'object' || logic === null) return false;
  const candidate = logic as { id?: unknown; root?: unknown; transition?: unknown };
  return (
    typeof candidate.id === 'string' &&
    typeof candidate.root === 'object' &&
    candidate.root !== null &&
    typeof candidate.transition === 'function'
  );
}
