import { AgentError } from '../domain/errors.js';
import type { AgentEvent } from '../domain/events.js';
import type { StepCheckpoint, StepMachines, StepSummary } from '../store/step-types.js';
import type { SessionCheckpoint, SessionStore } from '../store/types.js';
import type { SessionInfo, SessionView, StepView } from './protocol.js';
import { mayHoldLongString, wireEvent, wireMessages } from './wire.js';

const NO_MACHINES: StepMachines = { master: null, turn: null, calls: [] };

/** The session as a checkpoint holds it: history, counters, queues, the approval it waits for. */
export function viewOfCheckpoint(checkpoint: SessionCheckpoint, machines: StepMachines | null): SessionView {
  return {
    history: checkpoint.history,
    counters: checkpoint.counters,
    machines: machines ?? NO_MACHINES,
    approvals: checkpoint.run?.turn?.pendingApprovals ?? [],
    queues: { steering: checkpoint.steeringQueue, followUp: checkpoint.followUpQueue },
    running: checkpoint.run !== null,
  };
}

export function stepView(step: StepCheckpoint): StepView {
  const { checkpoint, machines, ...summary } = step;
  return { ...summary, view: viewOfCheckpoint(checkpoint, machines), turn: checkpoint.run?.turn ?? null };
}

/** A view as JSON for the page (long strings cut, like the events). */
export function wireView(view: SessionView): string {
  return `{"history":${wireMessages(view.history)},${wireViewRest(view)}}`;
}

/** A delta that replaces the whole view (a stored session another process advanced). */
export function wireViewDelta(view: SessionView): string {
  return `"history":{"from":0,"messages":${wireMessages(view.history)}},${wireViewRest(view)}`;
}

function wireViewRest(view: SessionView): string {
  const { queues, counters, machines, approvals, running } = view;
  const steering = wireMessages(queues.steering);
  const followUp = wireMessages(queues.followUp);
  return `"queues":{"steering":${steering},"followUp":${followUp}},${JSON.stringify({ counters, machines, approvals, running }).slice(1, -1)}`;
}

/** The time of each stored event: when its step was written (a store keeps no time per event). */
function timesOf(count: number, steps: readonly StepSummary[], offset: number): number[] {
  const times: number[] = [];
  let step = 0;
  for (let index = 0; index < count; index++) {
    while (step < steps.length - 1 && (steps[step] as StepSummary).events <= offset + index) step++;
    times.push(steps[step]?.committedAt ?? 0);
  }
  return times;
}

export function wireStoredEvents(events: readonly AgentEvent[], steps: readonly StepSummary[], offset = 0): string[] {
  const times = timesOf(events.length, steps, offset);
  return events.map((event, index) => wireEvent(event, times[index] as number));
}

/**
 * A stored session's events for the page, from `offset` on, and the key (`runId:seq`) of the last.
 * From the store's JSON as it is when it offers it (a `messages` field stays a history reference,
 * which the page reads the length of): a session of 10,000 events is not parsed and validated event
 * by event again; a very long event is cut like a live one.
 */
export async function storedEventsForPage(
  store: SessionStore,
  sessionId: string,
  steps: readonly StepSummary[],
  offset = 0,
): Promise<{ events: string[]; lastKey: string | null }> {
  if (!store.loadEventsJson) {
    const events = await store.loadEvents(sessionId, { from: offset });
    const last = events.at(-1);
    return { events: wireStoredEvents(events, steps, offset), lastKey: last ? `${last.runId}:${last.seq}` : null };
  }
  const rows = await store.loadEventsJson(sessionId, { from: offset });
  const times = timesOf(rows.length, steps, offset);
  const events = rows.map((row, index) => {
    const t = times[index] as number;
    if (mayHoldLongString(row)) return wireEvent(parseRow(sessionId, row, offset + index) as AgentEvent, t);
    const end = row.lastIndexOf('}');
    if (row[0] !== '{' || end < 0 || row.slice(end + 1).trim() !== '') parseRow(sessionId, row, offset + index);
    return `${row.slice(0, end)},"t":${t}}`;
  });
  const last =
    rows.length > 0 ? (parseRow(sessionId, rows.at(-1) as string, offset + rows.length - 1) as AgentEvent) : null;
  return { events, lastKey: last ? `${last.runId}:${last.seq}` : null };
}

function parseRow(sessionId: string, row: string, position: number): unknown {
  try {
    const value: unknown = JSON.parse(row);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value;
  } catch {
    // Reported below.
  }
  throw new AgentError('StoreCorrupted', `session "${sessionId}": stored event ${position} is not a JSON object`);
}

/** The first message of a stream, from parts already serialized. */
export function helloJson(parts: {
  info: SessionInfo;
  events: readonly string[];
  eventsDropped: number;
  steps: readonly StepSummary[] | null;
  view: SessionView;
  resync: boolean;
}): string {
  const { info, events, eventsDropped, steps, view, resync } = parts;
  return `{"hello":{"info":${JSON.stringify(info)},"events":[${events.join(',')}],"eventsDropped":${eventsDropped},"steps":${JSON.stringify(steps)},"now":${wireView(view)},"resync":${resync}}}`;
}
