import type { AnyStateMachine } from 'xstate';

/**
 * A plain, ordered description of a machine's state tree, read from `machine.root`. Diagrams are
 * drawn from this (never from hand-written lists), so a change to a machine redraws cleanly.
 */

export type ChartStateType = 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
export type ChartTransitionKind = 'event' | 'always' | 'after' | 'done' | 'error';

export interface ChartTransition {
  kind: ChartTransitionKind;
  /** The raw event type (`''` for `always`). */
  eventType: string;
  /** What a reader sees: `ABORT`, `always`, `after(steeringGrace)`, `done(callModel)`. */
  event: string;
  guard: string | null;
  /** Named actions as written; built-in ones as `xstate.assign`, `xstate.raise`, …; `inline` otherwise. */
  actions: string[];
  /** Target state ids; empty for a targetless transition (actions only, no state change). */
  targets: string[];
}

export interface ChartInvoke {
  id: string;
  src: string;
}

export interface ChartState {
  id: string;
  key: string;
  /** Keys from the root (excluded) down to this state. */
  path: string[];
  type: ChartStateType;
  /** Id of the initial child state, for compound states. */
  initial: string | null;
  entry: string[];
  exit: string[];
  invokes: ChartInvoke[];
  transitions: ChartTransition[];
  states: ChartState[];
}

/** The structural view of the parts of an XState StateNode this module reads. */
interface NodeView {
  id: string;
  key: string;
  path: string[];
  type: ChartStateType;
  states: Record<string, NodeView>;
  initial?: { target: ReadonlyArray<{ id: string }> };
  entry: readonly unknown[];
  exit: readonly unknown[];
  invoke: ReadonlyArray<{ id: string; src: unknown }>;
  transitions: ReadonlyMap<string, ReadonlyArray<TransitionView>>;
  always?: ReadonlyArray<TransitionView>;
}

interface TransitionView {
  eventType: string;
  guard?: unknown;
  actions: readonly unknown[];
  target?: ReadonlyArray<{ id: string }>;
  delay?: string | number;
}

export function chartOf(machine: AnyStateMachine): ChartState {
  const root = machine.root as unknown as NodeView;
  const invokeSources = new Map<string, string>();
  collectInvokes(root, invokeSources);
  return stateOf(root, invokeSources);
}

/** Actions worth showing a reader: named ones, and context updates as `assign`; timers and inline code are left out. */
export function shownActions(actions: readonly string[]): string[] {
  return actions
    .filter((action) => action !== 'inline' && action !== 'xstate.raise')
    .map((action) => action.replace(/^xstate\./, ''));
}

/** Every state of the chart, depth first in definition order (the root first). */
export function allStates(chart: ChartState): ChartState[] {
  return [chart, ...chart.states.flatMap(allStates)];
}

function collectInvokes(node: NodeView, into: Map<string, string>): void {
  for (const invoke of node.invoke) into.set(invoke.id, srcName(invoke.src));
  for (const child of Object.values(node.states)) collectInvokes(child, into);
}

function stateOf(node: NodeView, invokeSources: ReadonlyMap<string, string>): ChartState {
  const transitions: ChartTransition[] = [];
  for (const list of node.transitions.values()) {
    for (const transition of list) transitions.push(transitionOf(transition, invokeSources));
  }
  for (const transition of node.always ?? []) transitions.push(transitionOf(transition, invokeSources));
  return {
    id: node.id,
    key: node.key,
    path: [...node.path],
    type: node.type,
    initial: node.type === 'compound' ? (node.initial?.target[0]?.id ?? null) : null,
    entry: node.entry.map(actionName),
    exit: node.exit.map(actionName),
    invokes: node.invoke.map((invoke) => ({ id: invoke.id, src: srcName(invoke.src) })),
    transitions,
    states: Object.values(node.states).map((child) => stateOf(child, invokeSources)),
  };
}

function transitionOf(transition: TransitionView, invokeSources: ReadonlyMap<string, string>): ChartTransition {
  const { kind, event } = describeEvent(transition, invokeSources);
  return {
    kind,
    eventType: transition.eventType,
    event,
    guard: guardName(transition.guard),
    actions: transition.actions.map(actionName),
    targets: (transition.target ?? []).map((target) => target.id),
  };
}

function describeEvent(
  transition: TransitionView,
  invokeSources: ReadonlyMap<string, string>,
): { kind: ChartTransitionKind; event: string } {
  const type = transition.eventType;
  if (type === '' || type === undefined || type === null) return { kind: 'always', event: 'always' };
  if (type.startsWith('xstate.after.')) {
    const delay = transition.delay;
    return { kind: 'after', event: typeof delay === 'number' ? `after(${delay}ms)` : `after(${String(delay)})` };
  }
  if (type.startsWith('xstate.done.actor.')) {
    const id = type.slice('xstate.done.actor.'.length);
    return { kind: 'done', event: `done(${invokeSources.get(id) ?? id})` };
  }
  if (type.startsWith('xstate.error.actor.')) {
    const id = type.slice('xstate.error.actor.'.length);
    return { kind: 'error', event: `error(${invokeSources.get(id) ?? id})` };
  }
  if (type.startsWith('xstate.done.state.')) {
    const id = type.slice('xstate.done.state.'.length);
    return { kind: 'done', event: `done(${id.split('.').pop() ?? id})` };
  }
  return { kind: 'event', event: type };
}

function srcName(src: unknown): string {
  if (typeof src === 'string') return src;
  if (src && typeof src === 'object' && 'id' in src && typeof src.id === 'string') return src.id;
  return 'inline actor';
}

/** Higher-order guards (`not`, `and`, `or`) expose their operands; inline guards show their expression. */
export function guardName(guard: unknown): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && 'type' in guard) return String(guard.type);
  if (typeof guard === 'function') {
    const operands = (guard as { guards?: unknown }).guards;
    if (Array.isArray(operands))
      return `${guard.name}(${operands.map((operand) => guardName(operand) ?? '?').join(', ')})`;
    return inlineExpression(guard);
  }
  return 'inline';
}

function actionName(action: unknown): string {
  if (typeof action === 'string') return action;
  if (action && typeof action === 'object' && 'type' in action) return String(action.type);
  if (typeof action === 'function') {
    const builtin = (action as { type?: unknown }).type;
    if (typeof builtin === 'string' && builtin.startsWith('xstate.')) return builtin;
    return action.name && action.name !== 'actions' ? action.name : 'inline';
  }
  return 'inline';
}

/**
 * The body of a one-expression arrow function, with whitespace normalised so that every
 * TypeScript transpiler (tsx, vitest) yields the same text; anything longer is just `inline`.
 */
function inlineExpression(fn: Function): string {
  const source = fn
    .toString()
    .replace(/\s+/g, ' ')
    .replace(/ ?([^\w\s$]) ?/g, '$1');
  const arrow = source.indexOf('=>');
  if (arrow < 0) return 'inline';
  const body = source.slice(arrow + 2);
  if (body.startsWith('{') || body.length > 48) return 'inline';
  return body;
}
