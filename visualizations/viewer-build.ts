import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { machineIdOfSvg, renderViewerPage, svgElementOf } from '../src/trace/viewer-html.js';

/**
 * Builds the offline trace viewer: its script (the typed sources in src/trace/viewer/, transpiled
 * and joined into one classic script), the diagrams of visualizations/*.svg as a module of the package
 * (so a page written by an app has them), and visualizations/viewer.html (the page, with the diagrams
 * embedded). `npm run viz` writes all three; a test fails when one is stale.
 */

const root = fileURLToPath(new URL('..', import.meta.url));

/** In dependency order: each file may use only what the ones before it define. */
export const VIEWER_SOURCES = ['model.ts', 'timeline-model.ts', 'svg.ts', 'charts.ts', 'timeline.ts', 'app.ts'].map(
  (name) => `src/trace/viewer/${name}`,
);
/** Diagrams embedded in viewer.html, by file (their Graphviz graph title is the machine id). */
export const VIEWER_CHARTS = ['master.svg', 'turn.svg', 'tool-call.svg'].map((name) => `visualizations/${name}`);

export const VIEWER_SCRIPT_MODULE = 'src/trace/viewer-script.generated.ts';
export const CHARTS_MODULE = 'src/trace/charts.generated.ts';
export const VIEWER_PAGE = 'visualizations/viewer.html';

export function buildViewerScript(): Promise<string> {
  return joinScripts(VIEWER_SOURCES, 'startViewer(document);');
}

/**
 * Typed browser sources joined into one classic script: each is transpiled, its imports (types, or
 * names an earlier file declares) removed and its exports made plain declarations; `start` runs last.
 */
export async function joinScripts(sources: readonly string[], start: string): Promise<string> {
  const parts: string[] = [];
  const declaredIn = new Map<string, string>();
  for (const path of sources) {
    const source = await readFile(`${root}${path}`, 'utf8');
    const output = ts.transpileModule(source, {
      fileName: path,
      reportDiagnostics: false,
      compilerOptions: {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        verbatimModuleSyntax: true,
        removeComments: true,
      },
    }).outputText;
    // One script: imports between the viewer files become plain references, exports plain declarations.
    const body = output
      .replace(/^import\s[^;]*;[ \t]*\n/gm, '')
      .replace(/^export \{\};?[ \t]*\n?/gm, '')
      .replace(/^export (?=(async )?(function|const|let|class) )/gm, '')
      .replace(/^\/\/# sourceMappingURL=.*$/gm, '')
      .trim();
    if (/^\s*(import|export)\s/m.test(body))
      throw new Error(`${path}: an import or export is left after joining; use named declarations only`);
    // The files share one scope: a name declared twice would silently replace a function.
    for (const match of body.matchAll(/^(?:async )?(?:function\*? |const |let |class )(\w+)/gm)) {
      const earlier = declaredIn.get(match[1]);
      if (earlier) throw new Error(`${path}: top-level name "${match[1]}" is also declared in ${earlier}`);
      declaredIn.set(match[1], path);
    }
    parts.push(`// ${path}\n${body}`);
  }
  const script = `(() => {\n'use strict';\n${parts.join('\n\n')}\n\n${start}\n})();\n`;
  if (/<\/script/i.test(script)) throw new Error('the page script contains "</script": it would end its own element');
  return script;
}

export function scriptModuleOf(script: string): string {
  return [
    '// Generated from src/trace/viewer/*.ts by `npm run viz` (visualizations/viewer-build.ts). Do not edit.',
    "/** The offline trace viewer's script: one classic script, no imports, run once on the page. */",
    `export const VIEWER_SCRIPT = ${JSON.stringify(script)};`,
    '',
  ].join('\n');
}

/** The diagrams of visualizations/, by machine id (their Graphviz graph title). */
export async function readCharts(): Promise<Record<string, string>> {
  const charts: Record<string, string> = {};
  for (const path of VIEWER_CHARTS) {
    const svg = await readFile(`${root}${path}`, 'utf8');
    const machineId = machineIdOfSvg(svg);
    if (machineId === null) throw new Error(`${path}: no Graphviz graph title (the machine id) found`);
    charts[machineId] = svg;
  }
  return charts;
}

/** The diagrams as a module: the `<svg>` elements alone, without Graphviz's comments. */
export function chartsModuleOf(charts: Readonly<Record<string, string>>): string {
  const entries = Object.entries(charts).map(([machineId, svg]) => {
    const element = svgElementOf(svg).replace(/<!--[\s\S]*?-->\n?/g, '');
    return `  ${JSON.stringify(machineId)}: ${JSON.stringify(element)},`;
  });
  return [
    '// Generated from visualizations/*.svg (drawn from machines/) by `npm run viz` (visualizations/viewer-build.ts). Do not edit.',
    "/** The diagrams of agentchart's machines, by machine id: Graphviz SVGs whose node titles are state ids. */",
    'export const MACHINE_CHARTS: Readonly<Record<string, string>> = {',
    ...entries,
    '};',
    '',
  ].join('\n');
}

/** Every generated viewer file, by path from the repository root. */
export async function buildViewerFiles(): Promise<Array<{ path: string; content: string }>> {
  const script = await buildViewerScript();
  const charts = await readCharts();
  return [
    { path: VIEWER_SCRIPT_MODULE, content: scriptModuleOf(script) },
    { path: CHARTS_MODULE, content: chartsModuleOf(charts) },
    { path: VIEWER_PAGE, content: renderViewerPage(script, { charts }) },
  ];
}
