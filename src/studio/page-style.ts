/** The studio page's own styles, on top of the trace viewer's (charts, timeline, legend). */
export const STUDIO_STYLE = `
body { min-width: 1100px; }
header select { font-size: 13px; padding: 2px 6px; border-radius: 4px; max-width: 340px; }
header .badge { display: inline-block; margin-right: 6px; padding: 0 8px; border-radius: 9px; background: #33405a; color: #dbe3f1; font-size: 12px; }
header .badge.live, header .badge.running { background: #2e7d32; color: #fff; }
#connection { margin-left: auto; font-size: 12px; color: #cfd6e4; }
#connection[data-state="live"]::before { content: "● "; color: #66bb6a; }
#connection[data-state="closed"]::before { content: "● "; color: #ef5350; }
#travel { position: sticky; top: 0; z-index: 3; display: flex; align-items: center; gap: 6px; padding: 6px 16px; background: #fff; border-bottom: 1px solid var(--line); }
#travel button { font-size: 13px; padding: 3px 9px; border: 1px solid var(--line); background: #fff; border-radius: 4px; cursor: pointer; }
#travel button:disabled { opacity: 0.45; cursor: default; }
#travel #live.on { background: #e8f5e9; border-color: #66bb6a; color: #1b5e20; font-weight: 600; }
#travel #fork { background: #ede7f6; border-color: #9575cd; color: #311b92; }
#slider { flex: 1; min-width: 160px; }
#step-label { min-width: 260px; font-variant-numeric: tabular-nums; color: #374151; }
#fork-result button { margin-left: 4px; }
body.traveling #travel { background: #fff8e1; }
body:not(.loaded) main { display: grid; }
#charts { grid-template-columns: 1fr 1fr; }
#charts .chart-panel:first-child { grid-column: auto; }
#charts .chart-panel[data-machine="turn"] { grid-column: 1 / -1; order: -1; }
#charts .drawing.svg svg { max-height: 420px; }
#studio { display: grid; grid-template-columns: minmax(380px, 34%) 1fr; gap: 12px; padding: 12px 16px 24px; align-items: start; }
#right { display: grid; gap: 12px; min-width: 0; }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; min-width: 0; }
.panel h2 { margin: 0 0 6px; font-size: 14px; }
#conversation-panel { position: sticky; top: 46px; max-height: calc(100vh - 100px); display: flex; flex-direction: column; }
#conversation { overflow: auto; flex: 1; min-height: 120px; }
.msg { margin: 6px 0; padding: 6px 8px; border-radius: 6px; border: 1px solid var(--line); background: #fafbfc; }
.msg pre, .tool pre { margin: 0; white-space: pre-wrap; word-break: break-word; font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; }
.msg.user { background: #e3f2fd; border-color: #90caf9; margin-left: 28px; }
.msg.assistant { background: #fff; }
.msg.assistant.inflight { border-style: dashed; border-color: #7e57c2; }
.msg.assistant.streaming::after { content: "▍"; color: #7e57c2; animation: blink 1s steps(2) infinite; }
@keyframes blink { 50% { opacity: 0; } }
.msg.waiting { color: var(--muted); font-style: italic; }
.msg.toolResult.error, .tool .result.error { color: #8a1c1c; }
.msg .label { display: block; font-size: 11px; color: var(--muted); }
.thinking summary { font-size: 11px; color: var(--muted); cursor: pointer; }
.tool { margin: 6px 0 2px; padding: 4px 6px; border-left: 4px solid #90a4ae; background: #f6f8fa; border-radius: 0 4px 4px 0; }
.tool-head { display: flex; gap: 8px; align-items: baseline; font-size: 12px; }
.tool-name { font-weight: 700; }
.tool-id { color: var(--muted); font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 11px; }
.tool .badge { margin-left: auto; padding: 0 6px; border-radius: 8px; background: #eceff1; font-size: 11px; }
.tool.status-running { border-left-color: #1e88e5; } .tool.status-running .badge { background: #bbdefb; }
.tool.status-ok { border-left-color: #2e7d32; } .tool.status-ok .badge { background: #c8e6c9; }
.tool.status-error { border-left-color: #c62828; } .tool.status-error .badge { background: #ffcdd2; }
.tool.status-cancelled { border-left-color: #8d6e63; }
.tool.status-asked { border-left-color: #ffb300; } .tool.status-asked .badge { background: #ffe082; }
.tool.status-denied { border-left-color: #ad1457; }
.tool .args { color: #37474f; margin-top: 2px; }
.tool .result { margin-top: 4px; padding-top: 4px; border-top: 1px dashed var(--line); }
.tool .progress { font-size: 11px; color: #0d47a1; margin-top: 2px; }
.note { font-size: 12px; color: #8a4b00; margin: 4px 0; }
.show-earlier { font-size: 12px; margin: 4px 0; }
#approvals .approval { margin: 8px 0; padding: 8px; border: 2px solid #ffb300; border-radius: 6px; background: #fffbeb; }
.approval-head { display: flex; gap: 8px; align-items: baseline; margin-bottom: 4px; }
.approval-head .version { margin-left: auto; font-size: 11px; color: var(--muted); }
.approval-args { width: 100%; font: 12px ui-monospace, Menlo, Consolas, monospace; }
.approval-buttons { display: flex; gap: 6px; flex-wrap: wrap; margin-top: 4px; }
.approval-buttons input { flex: 1; min-width: 100px; }
.approval .problem, #error { color: #8a1c1c; }
button.approve { background: #2e7d32; color: #fff; border: 0; border-radius: 4px; padding: 4px 10px; }
button.approve-with { background: #fff; border: 1px solid #2e7d32; color: #1b5e20; border-radius: 4px; padding: 4px 10px; }
button.deny, #control-form button.danger { background: #c62828; color: #fff; border: 0; border-radius: 4px; padding: 4px 10px; }
button:disabled { opacity: 0.45; }
#queues { list-style: none; margin: 4px 0; padding: 0; font-size: 12px; color: #5d4037; }
#control-form .row { display: flex; gap: 6px; margin-top: 6px; }
#control-form input { flex: 1; padding: 4px 6px; border: 1px solid var(--line); border-radius: 4px; }
#control-form button { padding: 4px 10px; border-radius: 4px; border: 1px solid var(--line); background: #fff; cursor: pointer; }
#receipts { margin: 6px 0 0; padding-left: 18px; max-height: 8em; overflow: auto; font-size: 12px; }
#receipts .refused { color: #8a1c1c; }
#receipts .time { color: var(--muted); font-variant-numeric: tabular-nums; }
.bottom { display: grid; grid-template-columns: minmax(260px, 1fr) 2fr; gap: 12px; align-items: start; }
#counters { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 2px 10px; font-size: 12px; }
.counter { display: flex; justify-content: space-between; border-bottom: 1px dotted #e5e7eb; }
.counter.zero { color: #9aa3b2; }
.counter .value { font-variant-numeric: tabular-nums; font-weight: 600; }
.counter.changed .value { color: #e65100; }
#event-filters { display: flex; gap: 10px; flex-wrap: wrap; align-items: center; font-size: 12px; margin-bottom: 4px; }
#event-search { flex: 1; min-width: 120px; padding: 2px 6px; }
.event-scroll { max-height: 340px; overflow: auto; }
#events-panel table { width: 100%; border-collapse: collapse; font: 11px ui-monospace, Menlo, Consolas, monospace; }
#events-panel td { padding: 1px 6px 1px 0; white-space: nowrap; vertical-align: top; }
#events-panel td.summary { white-space: normal; word-break: break-word; }
#events-panel tr.event { cursor: pointer; }
#events-panel tr.event:hover { background: #eef1f6; }
#events-panel tr.future { opacity: 0.35; }
#events-panel tr.at-cursor { background: #fff3c4; }
#events-panel .type { color: #0f5132; }
#event-status, #timeline-note { font-size: 11px; color: var(--muted); }
`;
