import { MACHINE_CHARTS } from './charts.generated.js';
import { VIEWER_SCRIPT } from './viewer-script.generated.js';
import { VIEWER_STYLE } from './viewer-style.js';

export interface ViewerHtmlOptions {
  /**
   * Diagrams by machine id (`master`, `turn`, `toolCall`): Graphviz SVGs whose node titles are state ids.
   * The page always has the diagrams of agentchart's three machines (they ship with the package); one given
   * here replaces the shipped one of its machine. A machine with no diagram is drawn from the trace.
   */
  charts?: Readonly<Record<string, string>>;
  /** A JSONL trace to embed: the page opens on it (it can still load another file). */
  trace?: string;
  /** Shown as the embedded trace's name. */
  traceName?: string;
  title?: string;
}

/**
 * The offline trace viewer: one self-contained HTML page (no network, no external file), with the
 * machines' diagrams and optionally a trace embedded.
 */
export function viewerHtml(options: ViewerHtmlOptions = {}): string {
  return renderViewerPage(VIEWER_SCRIPT, { ...options, charts: { ...MACHINE_CHARTS, ...options.charts } });
}

/** The page around a given viewer script: `npm run viz` renders it with the script it just built. */
export function renderViewerPage(script: string, options: ViewerHtmlOptions): string {
  const title = options.title ?? 'agentchart trace viewer';
  const charts = Object.entries(options.charts ?? {})
    .map(
      ([machineId, svg]) =>
        `<template data-chart-machine="${escapeAttribute(machineId)}">${svgElementOf(svg)}</template>`,
    )
    .join('\n');
  const trace = options.trace === undefined ? '' : embeddable(options.trace);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${escapeText(title)}</title>
<style>
${VIEWER_STYLE}
</style>
</head>
<body>
<header>
  <h1>${escapeText(title)}</h1>
  <label class="open">Open trace… <input type="file" id="trace-file" accept=".jsonl,.ndjson,.json,.txt"></label>
  <span id="trace-name"></span>
  <span id="summary"></span>
</header>
<div id="error" role="alert" hidden></div>
<p id="placeholder">Open a JSONL trace (or drop it on this page). Record one with <code>npm run demo -- --trace out.jsonl</code>, or with <code>createTraceRecorder()</code> / <code>recordTrace(file)</code> from agentchart.</p>
<nav id="controls">
  <button id="first" type="button" title="First step (Home)">« first</button>
  <button id="prev" type="button" title="Previous step (←)">‹ prev</button>
  <button id="next" type="button" title="Next step (→)">next ›</button>
  <button id="last" type="button" title="Last step (End)">last »</button>
  <input type="range" id="slider" min="0" max="0" value="0" aria-label="step">
  <span id="step-label">no trace loaded</span>
</nav>
<section id="step-detail">
  <div id="step-title"></div>
  <ol id="step-entries"></ol>
</section>
<main>
  <section id="legend" aria-label="colours">
    <h2>Colours</h2>
    <span class="item" data-legend="active"><span class="swatch active"></span>active state</span>
    <span class="item" data-legend="from"><span class="swatch from"></span>state just left</span>
    <span class="item" data-legend="taken"><span class="swatch taken"></span>transition just taken</span>
    <span class="item" data-legend="final"><span class="swatch final"></span>final state</span>
    <span class="item" data-legend="model"><span class="swatch model"></span>model call</span>
    <span class="item" data-legend="ok"><span class="swatch ok"></span>tool ran</span>
    <span class="item" data-legend="error"><span class="swatch error"></span>error</span>
    <span class="item" data-legend="cancelled"><span class="swatch cancelled"></span>cancelled</span>
    <span class="item" data-legend="approved"><span class="swatch approved"></span>approved</span>
    <span class="item" data-legend="denied"><span class="swatch denied"></span>denied</span>
    <span class="item" data-legend="open"><span class="swatch open"></span>still running</span>
    <span class="item" data-legend="tick"><span class="swatch tick"></span>progress update, retry</span>
  </section>
  <div id="charts"></div>
  <section id="timeline-panel"><h2>Agent events <small>a block per turn · a lane per tool call · faded: after this step</small></h2><div id="timeline"></div></section>
</main>
${charts}
<script type="application/x-ndjson" id="trace-data" data-name="${escapeAttribute(options.traceName ?? 'embedded trace')}">${trace}</script>
<script>
${script}
</script>
</body>
</html>
`;
}

/** The machine id a Graphviz SVG of `npm run viz` was drawn for: the title of its graph. */
export function machineIdOfSvg(svg: string): string | null {
  return /<g id="graph0" class="graph"[^>]*>\s*<title>([^<]+)<\/title>/.exec(svg)?.[1] ?? null;
}

/** The `<svg>` element alone: an XML prolog or doctype has no place inside HTML. */
export function svgElementOf(svg: string): string {
  const start = svg.indexOf('<svg');
  if (start < 0) throw new Error('viewerHtml: a chart is not an SVG document');
  return svg.slice(start).trim();
}

/** JSONL inside a script element: `<` only occurs inside JSON strings, where `\u003c` means the same. */
function embeddable(trace: string): string {
  return trace.replace(/</g, '\\u003c');
}

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(text: string): string {
  return escapeText(text).replace(/"/g, '&quot;');
}
