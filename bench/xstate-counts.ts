import type { AnyStateMachine, InspectionEvent } from 'xstate';

/**
 * What a run asks of XState, counted: actors created, events delivered, microsteps, custom actions
 * executed (from the inspection stream), and assigns — each one a copy of the actor's context and
 * of its snapshot, which the inspection stream does not show: the charts' assign actions are
 * wrapped to count the calls of their `resolve`.
 */
export interface XStateCounts {
  actors: number;
  events: number;
  microsteps: number;
  actions: number;
  assigns: number;
}

let assigns = 0;
const counted = Symbol('counted assign');

interface BuiltinAction {
  (...args: unknown[]): unknown;
  type?: string;
  resolve?: (...args: unknown[]) => unknown;
  [counted]?: true;
}

function countAssign(action: unknown): void {
  if (typeof action !== 'function') return;
  const builtin = action as BuiltinAction;
  if (builtin.type !== 'xstate.assign' || builtin[counted]) return;
  const resolve = builtin.resolve as (...args: unknown[]) => unknown;
  builtin.resolve = (...args: unknown[]) => {
    assigns++;
    return resolve(...args);
  };
  builtin[counted] = true;
}

interface StateNodeLike {
  entry: unknown[];
  exit: unknown[];
  always?: { actions: unknown[] }[];
  transitions: Map<string, { actions: unknown[] }[]>;
  states: Record<string, StateNodeLike>;
}

/** Wraps every assign of `machine` (its named implementations and the inline ones of its states). */
export function countAssignsOf(machine: AnyStateMachine): void {
  for (const action of Object.values(machine.implementations.actions)) countAssign(action);
  const visit = (node: StateNodeLike) => {
    for (const action of [...node.entry, ...node.exit]) countAssign(action);
    const transitions = [...(node.always ?? []), ...[...node.transitions.values()].flat()];
    for (const transition of transitions) for (const action of transition.actions) countAssign(action);
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(machine.root as unknown as StateNodeLike);
}

/** An inspection observer that counts, and the counts of `units` (e.g. turns) so far. */
export function xstateCounter(): { inspect: (event: InspectionEvent) => void; per(units: number): XStateCounts } {
  const counts = { actors: 0, events: 0, microsteps: 0, actions: 0 };
  const assignsAtStart = assigns;
  return {
    inspect: (event) => {
      if (event.type === '@xstate.actor') counts.actors++;
      else if (event.type === '@xstate.event') counts.events++;
      else if (event.type === '@xstate.microstep') counts.microsteps++;
      else if (event.type === '@xstate.action') counts.actions++;
    },
    per: (units) => {
      const per = (n: number) => Number((n / units).toFixed(2));
      return {
        actors: per(counts.actors),
        events: per(counts.events),
        microsteps: per(counts.microsteps),
        actions: per(counts.actions),
        assigns: per(assigns - assignsAtStart),
      };
    },
  };
}

/** agentchart's provided master machine (and through it the turn machine), from the build or the sources the bench runs. */
export async function agentchartMachines(): Promise<AnyStateMachine[]> {
  const url = new URL('./runtime/master-effects.js', import.meta.resolve('agentchart'));
  const effects = (await import(url.href)) as { masterLogic(): AnyStateMachine };
  const master = effects.masterLogic();
  const turn = master.implementations.actors.turn as unknown as AnyStateMachine;
  return [master, turn];
}
