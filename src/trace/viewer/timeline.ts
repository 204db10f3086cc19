import type { TimelineData, TimelineLane, TimelineSpan, TimelineTurn } from './timeline-model.js';

/**
 * Draws the agent events: a block per turn on its own time scale, the model lane first, then a
 * lane per tool call. What happened after the cursor is faded; a span still running at the cursor
 * is drawn up to it, so stepping forward grows the bars.
 */

export interface TimelineCursor {
  entry: number;
  t: number;
}

export function renderTimeline(
  doc: Document,
  container: HTMLElement,
  data: TimelineData,
  cursor: TimelineCursor,
): void {
  const blocks: HTMLElement[] = [];
  if (data.session.length > 0) {
    const row = doc.createElement('div');
    row.className = 'session-events';
    for (const item of data.session) {
      const tag = doc.createElement('span');
      tag.className = `session-event${item.entry > cursor.entry ? ' future' : ''}`;
      tag.dataset.type = item.type;
      tag.textContent = `${formatMs(item.t)} ${item.text}`;
      row.append(tag);
    }
    blocks.push(row);
  }
  for (const turn of data.turns) blocks.push(renderTurn(doc, turn, cursor));
  if (data.turns.length === 0) {
    const empty = doc.createElement('p');
    empty.className = 'empty';
    empty.textContent = 'This trace has no turns.';
    blocks.push(empty);
  }
  container.replaceChildren(...blocks);
}

function renderTurn(doc: Document, turn: TimelineTurn, cursor: TimelineCursor): HTMLElement {
  const section = doc.createElement('section');
  section.className = `turn${turn.start.entry > cursor.entry ? ' future' : ''}`;
  section.dataset.turn = String(turn.turnIndex);
  const t0 = turn.start.t;
  const t1 = Math.max(
    turn.end?.t ?? t0,
    ...turn.lanes.flatMap((lane) => [
      ...lane.spans.flatMap((span) => [span.from.t, span.to?.t ?? span.from.t]),
      ...lane.ticks.map((tick) => tick.t),
    ]),
  );
  const span = Math.max(t1 - t0, 0.001);
  const pct = (t: number) => `${(Math.min(Math.max((t - t0) / span, 0), 1) * 100).toFixed(3)}%`;

  const heading = doc.createElement('h3');
  const ended = turn.end !== null && turn.end.entry <= cursor.entry;
  const state = turn.start.entry > cursor.entry ? 'later' : ended ? turn.reason : 'running';
  heading.textContent = `turn ${turn.turnIndex} · ${state} · ${formatMs(t0)} – ${formatMs(t1)} (${formatMs(t1 - t0)})`;
  section.append(heading);

  for (const lane of turn.lanes) section.append(renderLane(doc, lane, cursor, pct));

  const inTurn = cursor.entry >= turn.start.entry && (turn.end === null || cursor.entry <= turn.end.entry);
  if (inTurn) {
    const line = doc.createElement('div');
    line.className = 'cursor';
    line.style.left = `calc(var(--label-width) + (100% - var(--label-width)) * ${((cursor.t - t0) / span).toFixed(4)})`;
    section.append(line);
  }
  return section;
}

function renderLane(
  doc: Document,
  lane: TimelineLane,
  cursor: TimelineCursor,
  pct: (t: number) => string,
): HTMLElement {
  const row = doc.createElement('div');
  row.className = `lane lane-${lane.kind}`;
  row.dataset.lane = lane.id;
  const label = doc.createElement('span');
  label.className = 'lane-label';
  label.textContent = lane.label;
  label.title = lane.label;
  const track = doc.createElement('div');
  track.className = 'track';
  for (const item of lane.spans) track.append(renderSpan(doc, item, cursor, pct));
  for (const tick of lane.ticks) {
    const mark = doc.createElement('span');
    mark.className = `tick${tick.entry > cursor.entry ? ' future' : ''}`;
    mark.style.left = pct(tick.t);
    mark.title = `${formatMs(tick.t)} ${tick.title}`;
    track.append(mark);
  }
  row.append(label, track);
  return row;
}

function renderSpan(
  doc: Document,
  item: TimelineSpan,
  cursor: TimelineCursor,
  pct: (t: number) => string,
): HTMLElement {
  const bar = doc.createElement('span');
  const started = item.from.entry <= cursor.entry;
  const finished = item.to !== null && item.to.entry <= cursor.entry;
  // Before the cursor reaches its end, a span is drawn as running, up to the cursor.
  const status = finished ? item.status : started ? 'open' : item.status;
  const end = finished || !started ? (item.to?.t ?? item.from.t) : Math.max(cursor.t, item.from.t);
  bar.className = `span span-${item.kind} status-${status}${started ? '' : ' future'}`;
  bar.dataset.kind = item.kind;
  bar.dataset.status = status;
  bar.style.left = pct(item.from.t);
  bar.style.width = `max(3px, calc(${pct(end)} - ${pct(item.from.t)}))`;
  bar.title = `${formatMs(item.from.t)}${item.to ? ` – ${formatMs(item.to.t)}` : ''}: ${item.title}`;
  if (finished && item.to && item.kind !== 'result') bar.textContent = formatMs(item.to.t - item.from.t);
  return bar;
}

export function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}
