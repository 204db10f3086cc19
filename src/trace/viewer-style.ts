/** The viewer page's stylesheet. Active states: amber fill; the state just left: dashed blue; the edge taken: blue. */
export const VIEWER_STYLE = `
:root { --label-width: 210px; --ink: #1d2330; --muted: #6b7280; --line: #d9dde5; --active: #ffd54f; --active-ink: #e65100; --from: #1565c0; }
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink); background: #f6f7f9; }
header { display: flex; align-items: baseline; gap: 16px; padding: 10px 16px; background: #1d2330; color: #fff; flex-wrap: wrap; }
header h1 { font-size: 16px; margin: 0; font-weight: 600; }
header .open { cursor: pointer; background: #33405a; padding: 3px 10px; border-radius: 4px; }
header .open input { font-size: 12px; color: #cfd6e4; }
#trace-name { font-weight: 600; }
#summary { color: #cfd6e4; }
#error { margin: 10px 16px; padding: 8px 12px; background: #fde8e8; border: 1px solid #f5a3a3; color: #8a1c1c; border-radius: 4px; }
#placeholder { margin: 40px 16px; color: var(--muted); font-size: 15px; }
body.loaded #placeholder { display: none; }
body:not(.loaded) #controls, body:not(.loaded) #step-detail, body:not(.loaded) main { display: none; }
#controls { position: sticky; top: 0; z-index: 2; display: flex; align-items: center; gap: 6px; padding: 8px 16px; background: #fff; border-bottom: 1px solid var(--line); }
#controls button { font-size: 14px; min-width: 34px; padding: 3px 8px; border: 1px solid var(--line); background: #fff; border-radius: 4px; cursor: pointer; }
#controls button:hover { background: #eef1f6; }
#slider { flex: 1; }
#step-label { min-width: 170px; text-align: right; font-variant-numeric: tabular-nums; }
#step-detail { padding: 8px 16px; background: #fff; border-bottom: 1px solid var(--line); }
#step-title { font-weight: 600; font-size: 14px; }
#step-entries { margin: 4px 0 0; padding-left: 34px; max-height: 9.5em; overflow: auto; color: #374151; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
#step-entries .entry-agent { color: #0f5132; }
#step-entries .entry-transition { font-weight: 600; }
main { padding: 12px 16px 24px; display: grid; gap: 12px; }
#charts { display: grid; grid-template-columns: 3fr 2fr; gap: 12px; align-items: start; }
.chart-panel { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; min-width: 0; }
.chart-panel:first-child { grid-column: 1 / -1; }
.chart-panel.current { border-color: var(--from); box-shadow: 0 0 0 2px rgba(21, 101, 192, 0.18); }
.chart-panel h2, #timeline-panel h2 { margin: 0 0 6px; font-size: 14px; }
h2 small { font-weight: 400; color: var(--muted); margin-left: 6px; }
.chips { display: flex; flex-wrap: wrap; gap: 4px; margin-bottom: 6px; min-height: 22px; }
.chip { padding: 1px 8px; border-radius: 10px; background: #eef1f6; color: #374151; font-size: 12px; white-space: nowrap; }
.chip.shown { background: #fff3c4; color: #7a4100; }
.chip.stepped { outline: 2px solid var(--from); }
.chip.done, .chip.stopped { opacity: 0.7; }
.chip.error { background: #fde8e8; color: #8a1c1c; }
.drawing.svg { cursor: zoom-in; }
.drawing.svg svg text { font-family: Helvetica, Arial, "Liberation Sans", "DejaVu Sans Condensed", "DejaVu Sans", sans-serif; }
.chart-panel h2 .follow { float: right; font-size: 12px; font-weight: 400; padding: 1px 8px; border: 1px solid var(--line); background: #fff; border-radius: 4px; cursor: pointer; }
.chip.child { background: #f4f6fa; margin-left: 6px; }
#legend { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: center; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; font-size: 12px; color: #374151; }
#legend h2 { margin: 0; font-size: 13px; }
#legend .item { display: inline-flex; align-items: center; gap: 5px; white-space: nowrap; }
#legend .swatch { display: inline-block; width: 22px; height: 12px; border-radius: 3px; border: 1px solid #9aa3b2; background: #fff; }
#legend .swatch.active { background: var(--active); border: 2px solid var(--active-ink); }
#legend .swatch.from { border: 2px dashed var(--from); }
#legend .swatch.taken { border: none; height: 3px; background: var(--from); }
#legend .swatch.final { border: 3px double #555; }
#legend .swatch.model { background: #5e35b1; border-color: #5e35b1; }
#legend .swatch.ok { background: #2e7d32; border-color: #2e7d32; }
#legend .swatch.error { background: #c62828; border-color: #c62828; }
#legend .swatch.cancelled { background: #8d6e63; border-color: #8d6e63; }
#legend .swatch.approved { background: #7cb342; border-color: #7cb342; }
#legend .swatch.denied { background: #ad1457; border-color: #ad1457; }
#legend .swatch.open { background: repeating-linear-gradient(45deg, #1e88e5 0 6px, #42a5f5 6px 12px); border-color: #1e88e5; }
#legend .swatch.tick { width: 3px; border: none; background: #ffb300; height: 14px; }
.drawing.svg svg { width: 100%; height: auto; max-height: 620px; display: block; }
.drawing.svg.zoomed { cursor: zoom-out; overflow: auto; max-height: 85vh; }
.drawing.svg.zoomed svg { width: var(--natural-width); max-width: none; max-height: none; }
.drawing.svg g.node.active path, .drawing.svg g.node.active polygon, .drawing.svg g.node.active ellipse { fill: var(--active); stroke: var(--active-ink); stroke-width: 3px; }
.drawing.svg g.cluster.active > path, .drawing.svg g.cluster.active > polygon { stroke: var(--active-ink); stroke-width: 3px; fill: #fffaf0; }
.drawing.svg g.node.from path, .drawing.svg g.node.from polygon, .drawing.svg g.cluster.from > path { stroke: var(--from); stroke-width: 3px; stroke-dasharray: 6 4; }
.drawing.svg g.edge.taken path { stroke: var(--from); stroke-width: 3px; }
.drawing.svg g.edge.taken polygon { fill: var(--from); stroke: var(--from); }
.drawing.svg g.edge.taken text { fill: var(--from); font-weight: 700; }
.state { display: inline-flex; flex-direction: column; margin: 3px; padding: 3px 8px; border: 1px solid #9aa3b2; border-radius: 8px; background: #fff; vertical-align: top; }
.state-final { border-width: 3px; border-style: double; }
.state-children { display: flex; flex-wrap: wrap; }
.state.active { background: #fffaf0; border-color: var(--active-ink); }
.state.active:not(:has(.state)) { background: var(--active); border-width: 2px; }
.state.from { border: 2px dashed var(--from); }
#timeline-panel { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; }
.session-events { display: flex; gap: 12px; flex-wrap: wrap; margin-bottom: 6px; }
.session-event { background: #eef1f6; padding: 1px 8px; border-radius: 4px; }
.session-event.future { opacity: 0.35; }
.turn { position: relative; margin: 6px 0 10px; padding-bottom: 4px; border-top: 1px solid var(--line); }
.turn h3 { margin: 6px 0 4px; font-size: 13px; }
.turn.future { opacity: 0.35; }
.lane { display: flex; align-items: center; height: 22px; }
.lane-label { width: var(--label-width); flex: none; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; padding-right: 8px; color: #374151; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
.lane-model .lane-label { font-weight: 700; }
.track { position: relative; flex: 1; height: 16px; background: repeating-linear-gradient(90deg, #f1f3f7 0 1px, transparent 1px 10%); border-radius: 3px; }
.span { position: absolute; top: 1px; height: 14px; border-radius: 3px; font-size: 10px; line-height: 14px; color: #fff; padding: 0 4px; overflow: hidden; white-space: nowrap; }
.span.status-ok { background: #2e7d32; }
.span.status-error { background: #c62828; }
.span.status-cancelled { background: #8d6e63; }
.span.status-approved { background: #7cb342; }
.span.status-denied { background: #ad1457; }
.span.status-open { background: repeating-linear-gradient(45deg, #1e88e5 0 6px, #42a5f5 6px 12px); }
.span-model.status-ok { background: #5e35b1; }
.span-approval { opacity: 0.8; }
.span.future { opacity: 0.18; }
.track .tick { position: absolute; top: -2px; width: 2px; height: 20px; background: #ffb300; }
.track .tick.future { opacity: 0.2; }
.cursor { position: absolute; top: 26px; bottom: 0; width: 2px; background: var(--from); pointer-events: none; }
.empty { color: var(--muted); }
`;
