import type { ActorRefLike, InspectionEvent, Observer } from 'xstate';
import type { AgentEvent } from '../domain/events.js';
import {
  TRACE_FORMAT,
  TRACE_VERSION,
  type ActorStatus,
  type StateValue,
  type TraceEntry,
  type TraceEntryBody,
  type TraceHeader,
} from './format.js';
import { isStateMachine, machineOutline } from './outline.js';
import { AGENT_EVENT_LIMITS, INSPECTION_LIMITS, toJsonValue } from './serialize.js';

export interface TraceRecorderOptions {
  /** Receives every JSONL line (no trailing newline) as soon as it is recorded, the header first. */
  write?: (line: string) => void;
  /** Keep the lines in memory for `lines()` / `toJSONL()`. Default true. */
  keepLines?: boolean;
  /** A monotonic clock in milliseconds; `performance.now()` by default. Timestamps are relative to the recorder's start. */
  now?: () => number;
  /** Names an actor in the viewer from its input; the default reads agentchart's inputs (`turn 2`, `read_file · call_1`). */
  describeActor?: (machineId: string | null, input: unknown, actorId: string) => string;
}

export interface TraceRecorder {
  /** Pass as `createAgent({ inspect })`: XState's inspection stream of the master, turn and tool-call actors. */
  readonly inspect: Observer<InspectionEvent>;
  /** Subscribe it to `agent.events` (or a run's `events`): the agent events, in the same timeline. */
  readonly events: Observer<AgentEvent>;
  /** The lines recorded so far, the header first (empty when `keepLines` is false). */
  lines(): string[];
  /** The whole trace as JSONL text, newline-terminated. */
  toJSONL(): string;
  /** Number of entries after the header. */
  readonly entryCount: number;
}

/**
 * Records a session as a JSONL trace for the offline viewer. Browser-safe; the recorder never
 * throws into XState or the event stream: a value it cannot record becomes a `recorderError` line.
 */
export function createTraceRecorder(options: TraceRecorderOptions = {}): TraceRecorder {
  const now = options.now ?? (() => globalThis.performance.now());
  const describeActor = options.describeActor ?? defaultActorLabel;
  const keepLines = options.keepLines ?? true;
  const start = now();
  const kept: string[] = [];
  let count = 0;
  // Machine id by actor session id (null for promise/callback actors): decides what is recorded.
  const actorMachines = new Map<string, string | null>();
  const outlined = new Set<string>();

  const emit = (line: string) => {
    if (keepLines) kept.push(line);
    options.write?.(line);
  };
  const record = (body: TraceEntryBody) => {
    const elapsed = Math.max(0, now() - start);
    // `kind`, `i`, `t` first: a person reading the JSONL sees what each line is at a glance.
    const { kind, ...rest } = body;
    const entry = { kind, i: count, t: Math.round(elapsed * 1000) / 1000, ...rest } as TraceEntry;
    count += 1;
    emit(JSON.stringify(entry));
  };
  const guarded = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (error) {
      try {
        record({
          kind: 'recorderError',
          message: `${what}: ${error instanceof Error ? error.message : String(error)}`,
        });
      } catch {
        // The sink itself failed (e.g. a closed file): nothing more can be recorded.
      }
    }
  };

  const header: TraceHeader = {
    kind: 'header',
    format: TRACE_FORMAT,
    version: TRACE_VERSION,
    startedAt: new Date().toISOString(),
  };
  emit(JSON.stringify(header));

  const machineIdOf = (actorRef: ActorRefLike): string | null => {
    const known = actorMachines.get(actorRef.sessionId);
    if (known !== undefined) return known;
    const logic = (actorRef as { logic?: unknown }).logic;
    return isStateMachine(logic) ? logic.id : null;
  };

  const onActor = (actorRef: ActorRefLike) => {
    const logic = (actorRef as { logic?: unknown }).logic;
    const machine = isStateMachine(logic) ? logic : null;
    if (machine && !outlined.has(machine.id)) {
      outlined.add(machine.id);
      record({ kind: 'machine', machineId: machine.id, root: machineOutline(machine) });
    }
    const machineId = machine?.id ?? null;
    actorMachines.set(actorRef.sessionId, machineId);
    const actorId = (actorRef as { id?: unknown }).id;
    const parent = (actorRef as { _parent?: { sessionId?: unknown } })._parent;
    // The actor is announced before its first snapshot: its input says what it is for.
    const input = (actorRef as { options?: { input?: unknown } }).options?.input;
    record({
      kind: 'actor',
      sessionId: actorRef.sessionId,
      actorId: typeof actorId === 'string' ? actorId : actorRef.sessionId,
      parentId: typeof parent?.sessionId === 'string' ? parent.sessionId : null,
      machineId,
      label: describeActor(machineId, input, typeof actorId === 'string' ? actorId : actorRef.sessionId),
    });
  };

  // The last status and value recorded per actor: a snapshot that repeats it is not written again.
  const lastSnapshot = new Map<string, string>();
  const recordSnapshot = (
    actorRef: ActorRefLike,
    snapshot: { status: ActorStatus; error?: unknown },
    eventType: string,
  ) => {
    const value = valueOf(snapshot);
    const key = `${snapshot.status} ${JSON.stringify(value)}`;
    if (lastSnapshot.get(actorRef.sessionId) === key) return;
    lastSnapshot.set(actorRef.sessionId, key);
    record({
      kind: 'snapshot',
      sessionId: actorRef.sessionId,
      eventType,
      value,
      status: snapshot.status,
      ...(snapshot.status === 'error' ? { error: describeError(snapshot.error) } : {}),
    });
  };

  const onInspection = (event: InspectionEvent) => {
    if (event.type === '@xstate.actor') return onActor(event.actorRef);
    // An actor that ended tells its parent at once, and XState reports the ended actor's snapshot only
    // after the parent has reacted: it is recorded here, before the event, so the trace keeps cause first.
    if (event.type === '@xstate.event' && event.sourceRef && machineIdOf(event.sourceRef) !== null) {
      const status = (event.sourceRef.getSnapshot() as { status?: string } | undefined)?.status;
      if (status === 'done' || status === 'error')
        recordSnapshot(event.sourceRef, event.sourceRef.getSnapshot(), event.event.type);
    }
    // Only machine actors have states; promise and callback actors show up through their parents' events.
    if (machineIdOf(event.actorRef) === null) return;
    const sessionId = event.actorRef.sessionId;
    switch (event.type) {
      case '@xstate.event': {
        const payload = toJsonValue(event.event, INSPECTION_LIMITS);
        const body = typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? payload : {};
        record({
          kind: 'event',
          sessionId,
          sourceId: event.sourceRef?.sessionId ?? null,
          event: { ...body, type: event.event.type },
        });
        return;
      }
      case '@xstate.action':
        record({ kind: 'action', sessionId, action: event.action.type });
        return;
      case '@xstate.microstep':
        record({
          kind: 'transition',
          sessionId,
          eventType: event.event.type,
          transitions: event._transitions.map((transition) => ({
            source: transition.source.id,
            targets: (transition.target ?? []).map((target) => target.id),
          })),
          value: valueOf(event.snapshot),
        });
        return;
      case '@xstate.snapshot':
        recordSnapshot(event.actorRef, event.snapshot as { status: ActorStatus; error?: unknown }, event.event.type);
        return;
      default:
        return;
    }
  };

  return {
    inspect: { next: (event) => guarded(event.type, () => onInspection(event)) },
    events: {
      next: (event) =>
        guarded(`agent event ${event.type}`, () =>
          record({ kind: 'agent', event: toJsonValue(event, AGENT_EVENT_LIMITS) as unknown as AgentEvent }),
        ),
    },
    lines: () => kept.slice(),
    toJSONL: () => (kept.length === 0 ? '' : `${kept.join('\n')}\n`),
    get entryCount() {
      return count;
    },
  };
}

/** `turn 2` for a turn actor, `read_file · call_1` for a tool-call actor, else the machine id; other actors by their id. */
export function defaultActorLabel(machineId: string | null, input: unknown, actorId: string): string {
  // A promise or callback actor is named by its id (`0.toolCall.executing`), never mistaken for its parent.
  if (machineId === null) return actorId;
  if (typeof input === 'object' && input !== null) {
    const { call, turnIndex } = input as { call?: { id?: unknown; name?: unknown }; turnIndex?: unknown };
    if (call && typeof call.name === 'string' && typeof call.id === 'string') return `${call.name} · ${call.id}`;
    if (machineId === 'turn' && typeof turnIndex === 'number') return `turn ${turnIndex}`;
  }
  return machineId ?? actorId;
}

function valueOf(snapshot: unknown): StateValue {
  const value = (snapshot as { value?: unknown }).value;
  return typeof value === 'string' || (typeof value === 'object' && value !== null) ? (value as StateValue) : '';
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
