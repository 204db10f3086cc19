import type { StepSummary } from '../../store/step-types.js';
import type { Delta, Hello, SessionInfo, SessionView, WireEvent } from '../protocol.js';

/** The session as the page holds it: its log, its steps and what it is now. Plain data, no DOM. */
export interface PageSession {
  info: SessionInfo;
  events: WireEvent[];
  /** `runId:seq` of every event held (a delta may repeat what the snapshot had). */
  keys: Set<string>;
  eventsDropped: number;
  steps: StepSummary[] | null;
  now: SessionView;
  /** Bumped on every change: renderers skip work when what they drew is still current. */
  revision: number;
}

export const eventKey = (event: { runId: string; seq: number }) => `${event.runId}:${event.seq}`;

export function sessionFromHello(hello: Hello): PageSession {
  const session: PageSession = {
    info: hello.info,
    events: [],
    keys: new Set(),
    eventsDropped: hello.eventsDropped,
    steps: hello.steps,
    now: hello.now,
    revision: 0,
  };
  addEvents(session, hello.events);
  return session;
}

function addEvents(session: PageSession, events: readonly WireEvent[]): void {
  for (const event of events) {
    const key = eventKey(event);
    if (session.keys.has(key)) continue;
    session.keys.add(key);
    session.events.push(event);
  }
}

export function applyDelta(session: PageSession, delta: Delta): void {
  if (delta.events) addEvents(session, deltaEvents(delta));
  const now = session.now;
  if (delta.history) {
    now.history = now.history.slice(0, delta.history.from).concat(delta.history.messages);
  }
  if (delta.counters) now.counters = delta.counters;
  if (delta.machines) now.machines = delta.machines;
  if (delta.approvals) now.approvals = delta.approvals;
  if (delta.queues) now.queues = delta.queues;
  if (delta.running !== undefined) now.running = delta.running;
  if (delta.info) session.info = delta.info;
  session.revision += 1;
}

/** A delta's events with their times (`t0 + at[i]`; the wire sends them beside the events). */
export function deltaEvents(delta: Delta): WireEvent[] {
  const { events = [], t0 = 0, at = [] } = delta;
  // Fresh from JSON.parse: the page owns these objects.
  return events.map((event, index) => Object.assign(event, { t: t0 + (at[index] ?? 0) }) as WireEvent);
}

/** The events of the turn open at the end of `events` (after its turnStart, no turnEnd yet); empty if none is. */
export function openTurnEvents(events: readonly WireEvent[]): WireEvent[] {
  for (let index = events.length - 1; index >= 0; index--) {
    const type = (events[index] as WireEvent).type;
    if (type === 'turnEnd' || type === 'agentEnd') return [];
    if (type === 'turnStart') return events.slice(index);
  }
  return [];
}

/** The step holding the event at `index`: the last whose events end at or before it (as forkSession picks). */
export function stepIndexOfEvent(steps: readonly StepSummary[], index: number): number {
  let found = -1;
  for (let i = 0; i < steps.length; i++) {
    if ((steps[i] as StepSummary).events > index + 1) break;
    found = i;
  }
  return Math.max(found, 0);
}
