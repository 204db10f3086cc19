import type { AnyStateMachine } from 'xstate';
import { allStates, chartOf, type ChartState, type ChartTransition } from './chart.js';

/**
 * A Mermaid `stateDiagram-v2` of a machine (GitHub renders it). Every state is declared inside
 * its parent's block first; transitions that cross a block are written at the top level, after
 * all blocks, so Mermaid never re-declares a state in the wrong block. Entry actions are left to
 * the SVG: a Mermaid state description replaces the state's name.
 */
export function toMermaid(machine: AnyStateMachine, options: { header?: string } = {}): string {
  const chart = chartOf(machine);
  const ids = mermaidIds(chart);
  const parentOf = new Map<string, string>();
  for (const state of allStates(chart)) for (const child of state.states) parentOf.set(child.id, state.id);

  const lines: string[] = [];
  if (options.header) for (const line of options.header.split('\n')) lines.push(`%% ${line}`);
  lines.push('stateDiagram-v2');
  const crossing: string[] = [];
  writeBlock(chart, 1, { ids, parentOf, lines, crossing });
  lines.push(...crossing);
  return `${lines.join('\n')}\n`;
}

interface Writer {
  ids: ReadonlyMap<string, string>;
  parentOf: ReadonlyMap<string, string>;
  lines: string[];
  crossing: string[];
}

/** Writes the children of `state` (a compound state or the root) at `depth`. */
function writeBlock(state: ChartState, depth: number, writer: Writer): void {
  const pad = '  '.repeat(depth);
  const id = (stateId: string) => writer.ids.get(stateId) as string;
  if (state.initial) writer.lines.push(`${pad}[*] --> ${id(state.initial)}`);
  for (const child of state.states) {
    if (child.states.length > 0) {
      writer.lines.push(`${pad}state ${id(child.id)} {`);
      writeBlock(child, depth + 1, writer);
      writer.lines.push(`${pad}}`);
    } else {
      // A bare id declares the state (`state X` followed by another `state … {` breaks Mermaid's parser).
      writer.lines.push(`${pad}${id(child.id)}`);
    }
    for (const invoke of child.invokes) writer.lines.push(`${pad}note right of ${id(child.id)} : invoke ${invoke.src}`);
    if (child.type === 'final') writer.lines.push(`${pad}${id(child.id)} --> [*]`);
  }
  for (const child of state.states) {
    for (const transition of child.transitions) {
      const targets = transition.targets.length > 0 ? transition.targets : [child.id];
      for (const target of targets) {
        const line = `${id(child.id)} --> ${id(target)} : ${labelOf(transition)}`;
        // Inside this block only when both ends are declared here; everything else goes top level.
        if (writer.parentOf.get(target) === state.id) writer.lines.push(`${pad}${line}`);
        else writer.crossing.push(`  ${line}`);
      }
    }
  }
}

function labelOf(transition: ChartTransition): string {
  const guard = transition.guard ? ` [${transition.guard}]` : '';
  return sanitize(`${transition.event}${guard}`);
}

/** Mermaid ends a statement at `;`. */
function sanitize(text: string): string {
  return text.replace(/;/g, ',');
}

/** Readable ids: the state key when it is unique in the machine, else its path joined by `_`. */
function mermaidIds(chart: ChartState): Map<string, string> {
  const states = allStates(chart).slice(1);
  const keyCount = new Map<string, number>();
  for (const state of states) keyCount.set(state.key, (keyCount.get(state.key) ?? 0) + 1);
  const ids = new Map<string, string>();
  for (const state of states) {
    const raw = keyCount.get(state.key) === 1 ? state.key : state.path.join('_');
    ids.set(state.id, raw.replace(/[^A-Za-z0-9_]/g, '_'));
  }
  return ids;
}
