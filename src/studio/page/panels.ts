import type { Message } from '../../domain/messages.js';
import type { StepSummary } from '../../store/step-types.js';
import { buildTimeline, type TimelineData } from '../../trace/viewer/timeline-model.js';
import { renderTimeline } from '../../trace/viewer/timeline.js';
import type { SessionView, StepView, StreamMessage, WireEvent } from '../protocol.js';
import { byId, clockTime, h, plural } from './dom.js';

/** The page's smaller panels and the stream reader: each a function of what it draws or reads. */

/** Turns drawn in the timeline at most: those up to the cursor. */
const TIMELINE_TURNS = 30;

/** The timeline's data, rebuilt only when events were added. */
export interface TimelineCache {
  events: number;
  data: TimelineData;
}

export function drawTimeline(events: readonly WireEvent[], cursor: number, cache: TimelineCache | null): TimelineCache {
  const t0 = events[0]?.t ?? 0;
  let current = cache;
  if (!current || current.events !== events.length) {
    const items = events.map((event, entry) => ({ entry, t: event.t - t0, event: event as never }));
    current = { events: events.length, data: buildTimeline(items) };
  }
  const { data } = current;
  const upTo = data.turns.filter((turn) => turn.start.entry <= cursor);
  const shown = upTo.slice(-TIMELINE_TURNS);
  const at = events[Math.max(cursor, 0)]?.t ?? t0;
  renderTimeline(document, byId('timeline'), { turns: shown, session: data.session }, { entry: cursor, t: at - t0 });
  byId('timeline-note').textContent =
    upTo.length > shown.length ? `the last ${shown.length} of ${upTo.length} turns up to the cursor` : '';
  return current;
}

/** Steering and follow-up messages not yet delivered. */
export function renderQueues(queues: SessionView['queues']): void {
  const line = (label: string, messages: Message[]) =>
    messages.map((message) =>
      h('li', { class: `queued ${label}` }, `${label}: ${message.role === 'user' ? message.content : message.role}`),
    );
  byId('queues').replaceChildren(...line('steering', queues.steering), ...line('follow-up', queues.followUp));
}

/** The time-travel bar: enabled for a stored session, the step shown (or now), the fork button in travel. */
export function drawTravelBar(
  steps: readonly StepSummary[],
  stored: boolean,
  travel: { index: number; step: StepView } | null,
): void {
  const slider = byId<HTMLInputElement>('slider');
  slider.max = String(Math.max(steps.length - 1, 0));
  slider.value = String(travel ? travel.index : Math.max(steps.length - 1, 0));
  // A live session's step list is read when travelling starts: a stored session can always travel.
  for (const id of ['slider', 'first', 'prev', 'next', 'last']) (byId(id) as HTMLButtonElement).disabled = !stored;
  (byId('fork') as HTMLButtonElement).disabled = !travel;
  byId('live').classList.toggle('on', !travel);
  const label = byId('step-label');
  if (!stored) label.textContent = 'time travel needs a store: createAgent({ store, sessionId })';
  else if (travel) {
    const { step } = travel;
    label.textContent = `step ${travel.index + 1} / ${steps.length} · version ${step.version} · ${plural(step.events, 'event')} · ${clockTime(step.committedAt)}`;
  } else label.textContent = 'now · pick a step to travel back';
}

/** The server refused the stream: 404 when the session is gone (its agent closed, and nothing stored it). */
export class StreamRefused extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

/** Reads a session's stream (server-sent events over fetch, the token in a header) until it ends. */
export async function readStream(
  id: string,
  token: string,
  signal: AbortSignal,
  receive: (message: StreamMessage | { error: string }) => void,
): Promise<void> {
  const response = await fetch(`/api/stream?id=${encodeURIComponent(id)}`, {
    headers: { 'x-agentchart-token': token },
    signal,
  });
  if (!response.ok || !response.body) throw new StreamRefused(response.status);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const chunk = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (chunk.startsWith('data: ')) receive(JSON.parse(chunk.slice(6)) as StreamMessage | { error: string });
    }
  }
}
