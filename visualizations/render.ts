import { instance } from '@viz-js/viz';
import type { AnyStateMachine } from 'xstate';
import { masterMachine } from '../machines/master.machine.js';
import { toolCallMachine } from '../machines/tool-call.machine.js';
import { turnMachine } from '../machines/turn.machine.js';
import { toDot } from '../src/viz/dot.js';
import { toMermaid } from '../src/viz/mermaid.js';

/** The machines drawn in visualizations/, by file stem. */
export const MACHINES: ReadonlyArray<{ name: string; source: string; machine: AnyStateMachine }> = [
  { name: 'master', source: 'machines/master.machine.ts', machine: masterMachine },
  { name: 'turn', source: 'machines/turn.machine.ts', machine: turnMachine },
  { name: 'tool-call', source: 'machines/tool-call.machine.ts', machine: toolCallMachine },
];

export interface GeneratedFile {
  /** File name inside visualizations/. */
  name: string;
  content: string;
}

/**
 * Every generated diagram, in memory: `<name>.mmd` (Mermaid) and `<name>.svg` (Graphviz, compiled
 * to WebAssembly, so no browser is needed). Same machines in, byte-identical files out.
 */
export async function renderVisualizations(): Promise<GeneratedFile[]> {
  const viz = await instance();
  const files: GeneratedFile[] = [];
  for (const { name, source, machine } of MACHINES) {
    const header = `Generated from ${source} by \`npm run viz\`. Do not edit.`;
    files.push({ name: `${name}.mmd`, content: toMermaid(machine, { header }) });
    const result = viz.render(toDot(machine), { format: 'svg', engine: 'dot' });
    if (result.status !== 'success') {
      const problems = result.errors.map((error) => `${error.level ?? 'error'}: ${error.message}`).join('\n');
      throw new Error(`Graphviz could not draw ${name}:\n${problems}`);
    }
    files.push({ name: `${name}.svg`, content: result.output });
  }
  return files;
}
