import type { AnyStateMachine } from 'xstate';
import { chartOf, shownActions, type ChartState, type ChartTransition } from './chart.js';

/**
 * A Graphviz DOT graph of a machine: compound states are clusters, each with a dot for its
 * initial pseudo-state; an edge to or from a compound state is drawn to that dot and clipped at
 * the cluster border (`compound=true` with `lhead`/`ltail`).
 */
export function toDot(machine: AnyStateMachine): string {
  const chart = chartOf(machine);
  const compound = new Set<string>();
  const visit = (state: ChartState) => {
    if (state.states.length > 0) compound.add(state.id);
    state.states.forEach(visit);
  };
  visit(chart);

  const lines = [
    `digraph ${quote(chart.id)} {`,
    '  compound=true;',
    '  rankdir=TB;',
    '  newrank=true;',
    '  fontname="Helvetica"; fontsize=12;',
    '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Helvetica", fontsize=11];',
    '  edge [fontname="Helvetica", fontsize=9, color="#555555"];',
  ];
  writeChildren(chart, 1, lines, compound);
  const edges: string[] = [];
  const collect = (state: ChartState) => {
    for (const transition of state.transitions) edges.push(...edgesOf(state, transition, compound));
    state.states.forEach(collect);
  };
  chart.states.forEach(collect);
  lines.push(...edges, '}');
  return `${lines.join('\n')}\n`;
}

const initialOf = (stateId: string) => `${stateId}.__initial`;

function writeChildren(state: ChartState, depth: number, lines: string[], compound: ReadonlySet<string>): void {
  const pad = '  '.repeat(depth);
  if (state.initial) {
    lines.push(`${pad}${quote(initialOf(state.id))} [shape=point, width=0.12, label=""];`);
    const target = state.initial;
    const edge = compound.has(target)
      ? `${quote(initialOf(target))} [lhead=${quote(`cluster_${target}`)}]`
      : quote(target);
    lines.push(`${pad}${quote(initialOf(state.id))} -> ${edge};`);
  }
  for (const child of state.states) {
    const notes = notesOf(child);
    if (child.states.length > 0) {
      lines.push(`${pad}subgraph ${quote(`cluster_${child.id}`)} {`);
      lines.push(`${pad}  label=${quote([child.key, ...notes].join('\n'))}; style="rounded"; color="#888888";`);
      writeChildren(child, depth + 1, lines, compound);
      lines.push(`${pad}}`);
    } else {
      const final = child.type === 'final' ? ', peripheries=2, fillcolor="#eeeeee"' : '';
      lines.push(`${pad}${quote(child.id)} [label=${quote([child.key, ...notes].join('\n'))}${final}];`);
    }
  }
}

/** Entry actions and invoked actors, shown under the state's name. */
function notesOf(state: ChartState): string[] {
  const notes: string[] = [];
  const entry = shownActions(state.entry).filter((action) => action !== 'assign');
  if (entry.length > 0) notes.push(`entry / ${entry.join(', ')}`);
  for (const invoke of state.invokes) notes.push(`invoke ${invoke.src}`);
  return notes;
}

function edgesOf(source: ChartState, transition: ChartTransition, compound: ReadonlySet<string>): string[] {
  const label = labelOf(transition);
  const from = compound.has(source.id) ? initialOf(source.id) : source.id;
  // A targetless transition (actions only) is a self-loop on its state.
  if (transition.targets.length === 0)
    return [`  ${quote(from)} -> ${quote(from)} [label=${quote(label)}, style=dashed];`];
  return transition.targets.map((target) => {
    const attributes = [`label=${quote(label)}`];
    const to = compound.has(target) ? initialOf(target) : target;
    const inside = (outer: string, inner: string) => inner === outer || inner.startsWith(`${outer}.`);
    if (compound.has(source.id) && !inside(source.id, target))
      attributes.push(`ltail=${quote(`cluster_${source.id}`)}`);
    if (compound.has(target) && !inside(target, source.id)) attributes.push(`lhead=${quote(`cluster_${target}`)}`);
    if (transition.kind === 'always') attributes.push('style=dashed');
    return `  ${quote(from)} -> ${quote(to)} [${attributes.join(', ')}];`;
  });
}

function labelOf(transition: ChartTransition): string {
  const guard = transition.guard ? ` [${transition.guard}]` : '';
  const actions = shownActions(transition.actions);
  return actions.length > 0 ? `${transition.event}${guard}\n/ ${actions.join(', ')}` : `${transition.event}${guard}`;
}

function quote(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}
