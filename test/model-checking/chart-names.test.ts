import { describe, expect, it } from 'vitest';
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { masterMachine } from '../../machines/master.machine.js';
import { toolCallMachine } from '../../machines/tool-call.machine.js';
import { turnMachine } from '../../machines/turn.machine.js';

/**
 * Every action, guard, actor and delay a chart names is one its setup implements. XState skips a
 * named action it has no implementation for without a word, so a misspelt or emptied name in a
 * chart would silently drop an effect; TypeScript refuses it in the source, this refuses it in the
 * chart as loaded (and kills the mutants that empty a name).
 */

interface Names {
  actions: Set<string>;
  guards: Set<string>;
  actors: Set<string>;
  delays: Set<string>;
}

/** A named reference: a string, or `{ type }` (with params); an inline function names nothing. */
function nameOf(item: unknown): string | null {
  if (typeof item === 'string') return item;
  if (item && typeof item === 'object' && typeof (item as { type?: unknown }).type === 'string')
    return (item as { type: string }).type;
  return null;
}

function addGuard(guard: unknown, names: Names): void {
  const name = nameOf(guard);
  if (name !== null) names.guards.add(name);
  // Higher-order guards (and, or, not) carry the guards they combine.
  const combined = (guard as { guards?: unknown[] } | undefined)?.guards;
  if (typeof guard === 'function' && Array.isArray(combined)) for (const inner of combined) addGuard(inner, names);
}

function addActions(actions: readonly unknown[] | undefined, names: Names): void {
  for (const action of actions ?? []) {
    const name = nameOf(action);
    if (name !== null) names.actions.add(name);
  }
}

function collect(node: AnyStateNode, names: Names): void {
  addActions(node.entry, names);
  addActions(node.exit, names);
  for (const transitions of node.transitions.values())
    for (const transition of transitions) {
      addActions(transition.actions, names);
      if (transition.guard !== undefined) addGuard(transition.guard, names);
    }
  for (const transition of node.always ?? []) {
    addActions(transition.actions, names);
    if (transition.guard !== undefined) addGuard(transition.guard, names);
  }
  for (const delayed of node.after) if (typeof delayed.delay === 'string') names.delays.add(delayed.delay);
  for (const invoke of node.invoke) if (typeof invoke.src === 'string') names.actors.add(invoke.src);
  for (const child of Object.values(node.states)) collect(child, names);
}

function namesOf(machine: AnyStateMachine): Names {
  const names: Names = { actions: new Set(), guards: new Set(), actors: new Set(), delays: new Set() };
  collect(machine.root, names);
  return names;
}

/** A name of each kind the walk must find in each chart (a walk that found nothing would pass whatever the chart says). */
const charts: Array<[string, AnyStateMachine, Record<keyof Names, string>]> = [
  ['master', masterMachine, { actions: 'recordStop', guards: 'runWasStopped', actors: 'turn', delays: 'retryDelay' }],
  [
    'turn',
    turnMachine,
    { actions: 'recordReply', guards: 'replyHasToolCalls', actors: 'callModel', delays: 'steeringGrace' },
  ],
  [
    'tool-call',
    toolCallMachine,
    { actions: 'announceExecutionEnd', guards: 'hasTimeLimit', actors: 'executeTool', delays: 'toolTimeout' },
  ],
];

describe('the names a chart uses', () => {
  for (const [label, machine, seen] of charts) {
    it(`are all implemented by the ${label} machine's setup`, () => {
      const names = namesOf(machine);
      const implemented = machine.implementations;
      const missing = (kind: keyof Names) =>
        [...names[kind]].filter((name) => !Object.hasOwn(implemented[kind] as object, name));
      expect({
        actions: missing('actions'),
        guards: missing('guards'),
        actors: missing('actors'),
        delays: missing('delays'),
      }).toEqual({ actions: [], guards: [], actors: [], delays: [] });
      for (const kind of ['actions', 'guards', 'actors', 'delays'] as const) expect(names[kind]).toContain(seen[kind]);
    });
  }
});
