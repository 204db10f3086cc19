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
    files.push({ name: `${name}.svg`, content: withReadableFonts(result.output) });
  }
  return files;
}

/**
 * Graphviz sizes boxes for Helvetica's widths; where there is no Helvetica (a default Debian has
 * DejaVu, which is wider) a label would spill over its box. The condensed DejaVu comes before the
 * generic family, so every label fits whatever the machine has.
 */
export const FONT_STACK = "Helvetica,Arial,'Liberation Sans','DejaVu Sans Condensed',sans-serif";

function withReadableFonts(svg: string): string {
  return svg.replaceAll('font-family="Helvetica,sans-Serif"', `font-family="${FONT_STACK}"`);
}
