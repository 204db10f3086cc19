import type { AgentEvent } from '../../domain/events.js';
import type { ActorStatus, MachineOutlineNode, StateValue, TraceEntry, TraceEntryOf, TraceHeader } from '../format.js';

/**
 * The viewer's reading of a trace: actors, the steps to walk through and each actor's state at a
 * step. Plain data and functions, no DOM: it runs in the page (concatenated into its script, so
 * only type imports) and in the unit tests.
 */

export interface ViewerActor {
  sessionId: string;
  actorId: string;
  parentId: string | null;
  machineId: string | null;
  label: string;
  /** Entry index of its creation. */
  createdAt: number;
}

/** One step of the walk: a microstep of one machine actor, or a change of its snapshot status. */
export interface ViewerStep {
  /** Index of the trace entry. */
  entry: number;
  t: number;
  sessionId: string;
  kind: 'transition' | 'snapshot';
  eventType: string;
  value: StateValue;
  status: ActorStatus;
  /** Transitions taken (microsteps only): source and target state ids. */
  edges: Array<{ source: string; target: string }>;
}

export interface ViewerModel {
  header: TraceHeader;
  entries: TraceEntry[];
  /** Machine outlines by machine id, in order of first appearance. */
  machines: Map<string, MachineOutlineNode>;
  actors: Map<string, ViewerActor>;
  steps: ViewerStep[];
}

export interface ActorState {
  value: StateValue;
  status: ActorStatus;
  /** Entry index of the last change. */
  changedAt: number;
}

const ENTRY_KINDS = new Set([
  'machine',
  'actor',
  'event',
  'action',
  'transition',
  'snapshot',
  'agent',
  'recorderError',
]);

/** Reads JSONL trace text; throws an Error naming the first bad line. Unknown kinds are skipped (newer recorders). */
export function readTraceText(text: string): ViewerModel {
  let header: TraceHeader | null = null;
  const entries: TraceEntry[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index].trim();
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new Error(`line ${index + 1}: not valid JSON`);
    }
    const record = value as { kind?: unknown; format?: unknown; version?: unknown; i?: unknown; t?: unknown };
    if (header === null) {
      if (record.kind !== 'header' || record.format !== 'agentchart-trace')
        throw new Error(`line ${index + 1}: not an agentchart trace (no header line)`);
      if (record.version !== 1)
        throw new Error(
          `line ${index + 1}: trace version ${String(record.version)} is not supported (this viewer reads version 1)`,
        );
      header = value as TraceHeader;
      continue;
    }
    if (typeof record.kind !== 'string' || !ENTRY_KINDS.has(record.kind)) continue;
    if (typeof record.i !== 'number' || typeof record.t !== 'number')
      throw new Error(`line ${index + 1}: an entry needs numeric "i" and "t"`);
    entries.push(value as TraceEntry);
  }
  if (header === null) throw new Error('the file is empty');
  return buildModel(header, entries);
}

export function buildModel(header: TraceHeader, entries: TraceEntry[]): ViewerModel {
  const machines = new Map<string, MachineOutlineNode>();
  const actors = new Map<string, ViewerActor>();
  const steps: ViewerStep[] = [];
  const current = new Map<string, { value: string; status: ActorStatus }>();
  entries.forEach((entry, index) => {
    if (entry.kind === 'machine') {
      if (!machines.has(entry.machineId)) machines.set(entry.machineId, entry.root);
    } else if (entry.kind === 'actor') {
      actors.set(entry.sessionId, {
        sessionId: entry.sessionId,
        actorId: entry.actorId,
        parentId: entry.parentId,
        machineId: entry.machineId,
        label: entry.label,
        createdAt: index,
      });
    } else if (entry.kind === 'transition') {
      const status = statusAfterMicrostep(machines, actors.get(entry.sessionId), entry.value);
      current.set(entry.sessionId, { value: JSON.stringify(entry.value), status });
      const edges = entry.transitions.flatMap((transition) =>
        transition.targets.map((target) => ({ source: transition.source, target })),
      );
      steps.push({
        entry: index,
        t: entry.t,
        sessionId: entry.sessionId,
        kind: 'transition',
        eventType: entry.eventType,
        value: entry.value,
        status,
        edges,
      });
    } else if (entry.kind === 'snapshot') {
      const before = current.get(entry.sessionId);
      const value = JSON.stringify(entry.value);
      current.set(entry.sessionId, { value, status: entry.status });
      // A snapshot after a macrostep repeats the last microstep's value: a step only when something changed.
      if (before && before.value === value && before.status === entry.status) return;
      steps.push({
        entry: index,
        t: entry.t,
        sessionId: entry.sessionId,
        kind: 'snapshot',
        eventType: entry.eventType,
        value: entry.value,
        status: entry.status,
        edges: [],
      });
    }
  });
  return { header, entries, machines, actors, steps };
}

/** A microstep into a top-level final state ends the actor, before its last snapshot is reported. */
function statusAfterMicrostep(
  machines: ReadonlyMap<string, MachineOutlineNode>,
  actor: ViewerActor | undefined,
  value: StateValue,
): ActorStatus {
  const root = actor?.machineId ? machines.get(actor.machineId) : undefined;
  const top = typeof value === 'string' ? root?.states.find((state) => state.key === value) : undefined;
  return top?.type === 'final' ? 'done' : 'active';
}

/** Every actor's state as of entry `entry` (inclusive). */
export function actorStatesAt(model: ViewerModel, entry: number): Map<string, ActorState> {
  const states = new Map<string, ActorState>();
  const last = Math.min(entry, model.entries.length - 1);
  for (let index = 0; index <= last; index++) {
    const item = model.entries[index];
    if (item.kind === 'transition') {
      states.set(item.sessionId, {
        value: item.value,
        status: statusAfterMicrostep(model.machines, model.actors.get(item.sessionId), item.value),
        changedAt: index,
      });
    } else if (item.kind === 'snapshot') {
      const before = states.get(item.sessionId);
      const same =
        before && before.status === item.status && JSON.stringify(before.value) === JSON.stringify(item.value);
      states.set(item.sessionId, {
        value: item.value,
        status: item.status,
        changedAt: same && before ? before.changedAt : index,
      });
    }
  }
  return states;
}

/** Ids of every state a value makes active (compound states and their active descendants). */
export function activeStateIds(root: MachineOutlineNode, value: StateValue): string[] {
  const ids: string[] = [];
  const walk = (node: MachineOutlineNode, part: StateValue) => {
    const keys = typeof part === 'string' ? [part] : Object.keys(part);
    for (const key of keys) {
      const child = node.states.find((state) => state.key === key);
      if (!child) continue;
      ids.push(child.id);
      if (typeof part !== 'string') walk(child, part[key]);
    }
  };
  walk(root, value);
  return ids;
}

/** `TOOL_EXECUTION.collect.running`; parallel regions are joined with ` | `. */
export function describeValue(value: StateValue): string {
  if (typeof value === 'string') return value;
  return Object.keys(value)
    .map((key) => {
      const child = value[key];
      const inner = describeValue(child);
      return typeof child === 'string' || Object.keys(child).length <= 1 ? `${key}.${inner}` : `${key}.(${inner})`;
    })
    .join(' | ');
}

/** The agent events of the trace, with their entry index and time. */
export function agentEntries(model: ViewerModel): Array<{ entry: number; t: number; event: AgentEvent }> {
  const result: Array<{ entry: number; t: number; event: AgentEvent }> = [];
  model.entries.forEach((item, index) => {
    if (item.kind === 'agent') result.push({ entry: index, t: item.t, event: (item as TraceEntryOf<'agent'>).event });
  });
  return result;
}

/**
 * An actor as the viewer names it: by its label, after its parent's when the parent is not the
 * root (a tool call under its turn: `turn 0 › lookup · c1`).
 */
export function actorTitle(model: Pick<ViewerModel, 'actors'>, actor: ViewerActor): string {
  const parent = actor.parentId ? model.actors.get(actor.parentId) : undefined;
  return parent && parent.parentId !== null && parent.machineId !== null
    ? `${parent.label} › ${actor.label}`
    : actor.label;
}
