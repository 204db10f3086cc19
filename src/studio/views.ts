import type { AgentEvent } from '../domain/events.js';
import type { StepCheckpoint, StepMachines, StepSummary } from '../store/step-types.js';
import type { SessionCheckpoint } from '../store/types.js';
import type { SessionInfo, SessionView, StepView } from './protocol.js';
import { wireEvent, wireMessages } from './wire.js';

const NO_MACHINES: StepMachines = { master: null, turn: null, calls: [] };

/** The session as a checkpoint holds it: history, counters, queues, the approval it waits for. */
export function viewOfCheckpoint(checkpoint: SessionCheckpoint, machines: StepMachines | null): SessionView {
  const pending = checkpoint.run?.turn?.pendingApproval ?? null;
  return {
    history: checkpoint.history,
    counters: checkpoint.counters,
    machines: machines ?? NO_MACHINES,
    approvals: pending ? [pending] : [],
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

/**
 * Stored events for the page, each stamped with the time its step was written (a store keeps no
 * time per event; the step that stored it is the closest it knows).
 */
export function wireStoredEvents(events: readonly AgentEvent[], steps: readonly StepSummary[], offset = 0): string[] {
  const wired: string[] = [];
  let step = 0;
  events.forEach((event, index) => {
    const position = offset + index;
    while (step < steps.length - 1 && (steps[step] as StepSummary).events <= position) step++;
    wired.push(wireEvent(event, steps[step]?.committedAt ?? 0));
  });
  return wired;
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
