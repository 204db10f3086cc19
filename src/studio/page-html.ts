import type { MachineOutlineNode } from '../trace/format.js';
import { VIEWER_STYLE } from '../trace/viewer-style.js';
import { STUDIO_STYLE } from './page-style.js';

export interface StudioPageOptions {
  /** The page's script: the sources of src/studio/page/ and the viewer's charts and timeline, joined. */
  script: string;
  /** Graphviz SVGs by machine id. */
  charts: Readonly<Record<string, string>>;
  outlines: Readonly<Record<string, MachineOutlineNode>>;
  title?: string;
}

/**
 * The studio's one page: everything inline (styles, script, diagrams), nothing fetched but the
 * studio's own API on the same origin — it works with the network off.
 */
export function studioPageHtml(options: StudioPageOptions): string {
  const title = escapeText(options.title ?? 'agentchart studio');
  const charts = Object.entries(options.charts)
    .map(
      ([machineId, svg]) =>
        `<template data-chart-machine="${escapeText(machineId)}">${svg.slice(svg.indexOf('<svg')).trim()}</template>`,
    )
    .join('\n');
  const config = JSON.stringify({ outlines: options.outlines }).replace(/</g, '\\u003c');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'self'">
<link rel="icon" href="data:,">
<title>${title}</title>
<style>
${VIEWER_STYLE}
${STUDIO_STYLE}
</style>
</head>
<body>
<header>
  <h1>${title}</h1>
  <select id="session-select" aria-label="session"></select>
  <span id="session-badges"></span>
  <span id="summary"></span>
  <span id="connection" data-state="connecting">connecting…</span>
</header>
<div id="error" role="alert" hidden></div>
<nav id="travel" aria-label="time travel">
  <button id="live" type="button" class="on" title="Back to now">● live</button>
  <button id="first" type="button" title="First step">«</button>
  <button id="prev" type="button" title="Previous step">‹</button>
  <input type="range" id="slider" min="0" max="0" value="0" aria-label="step">
  <button id="next" type="button" title="Next step">›</button>
  <button id="last" type="button" title="Last step">»</button>
  <span id="step-label"></span>
  <button id="fork" type="button" title="A new session whose state is this step's checkpoint">Fork from here</button>
  <span id="fork-result"></span>
</nav>
<main id="studio">
  <section id="conversation-panel" class="panel" aria-label="conversation">
    <h2>Conversation</h2>
    <div id="conversation"><div id="history"></div><div id="inflight"></div></div>
    <div id="approvals"></div>
    <ul id="queues"></ul>
    <form id="control-form" autocomplete="off">
      <div class="row"><input id="steer-text" placeholder="Steer the turn in progress…"><button id="steer" type="submit">Steer</button></div>
      <div class="row"><input id="follow-up-text" placeholder="Follow up after the run…"><button id="follow-up" type="button">Follow up</button></div>
      <div class="row"><input id="prompt-text" placeholder="Prompt (starts a run)…"><button id="prompt" type="button">Prompt</button><button id="abort" type="button" class="danger">Abort</button></div>
    </form>
    <ol id="receipts" aria-label="receipts"></ol>
  </section>
  <section id="right">
    <div id="charts"></div>
    <section id="timeline-panel" class="panel"><h2>Timeline <small>a block per turn · the model's lane, then a lane per tool call · faded: after the cursor</small> <small id="timeline-note"></small></h2><div id="timeline"></div></section>
    <div class="bottom">
      <section id="counters-panel" class="panel"><h2>Counters</h2><div id="counters"></div></section>
      <section id="events-panel" class="panel">
        <h2>Events</h2>
        <div id="event-filters"><span id="event-kinds"></span><input id="event-search" type="search" placeholder="filter by text…" aria-label="filter events"></div>
        <div class="event-scroll" id="event-scroll"><table><tbody id="event-rows"></tbody></table></div>
        <div id="event-status"></div>
      </section>
    </div>
  </section>
</main>
${charts}
<script type="application/json" id="studio-config">${config}</script>
<script>
${options.script}
</script>
</body>
</html>
`;
}

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
