import { z } from 'zod';
import { AgentEventSchema } from '../domain/events.js';

/**
 * The JSONL trace format: one JSON object per line. The first line is the header; every other line
 * has `i` (its position, from 0) and `t` (milliseconds since the recorder started). Inspection lines
 * come from XState's inspection stream (machine actors only); `agent` lines are the agent events.
 */

export const TRACE_FORMAT = 'agentchart-trace';
export const TRACE_VERSION = 1;

/** A state node of a machine definition, as the viewer draws it when it has no diagram for it. */
export interface MachineOutlineNode {
  id: string;
  key: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  states: MachineOutlineNode[];
}

export const MachineOutlineNodeSchema: z.ZodType<MachineOutlineNode> = z.object({
  id: z.string(),
  key: z.string(),
  type: z.enum(['atomic', 'compound', 'parallel', 'final', 'history']),
  get states() {
    return z.array(MachineOutlineNodeSchema);
  },
});

/** XState's state value: a state key, or nested keys down to the active atomic states. */
export type StateValue = string | { [key: string]: StateValue };
export const StateValueSchema: z.ZodType<StateValue> = z.union([
  z.string(),
  z.record(
    z.string(),
    z.lazy(() => StateValueSchema),
  ),
]);

export const ActorStatusSchema = z.enum(['active', 'done', 'error', 'stopped']);
export type ActorStatus = z.infer<typeof ActorStatusSchema>;

const at = { i: z.number().int().nonnegative(), t: z.number().nonnegative() };

export const TraceHeaderSchema = z.object({
  kind: z.literal('header'),
  format: z.literal(TRACE_FORMAT),
  version: z.literal(TRACE_VERSION),
  /** Wall-clock time of `t = 0`, ISO 8601. */
  startedAt: z.string(),
});
export type TraceHeader = z.infer<typeof TraceHeaderSchema>;

export const TraceEntrySchema = z.discriminatedUnion('kind', [
  /** A machine's definition, written once, before its first actor. */
  z.object({ kind: z.literal('machine'), ...at, machineId: z.string(), root: MachineOutlineNodeSchema }),
  /** An actor was created. `machineId` is null for promise/callback actors (their states are not recorded). */
  z.object({
    kind: z.literal('actor'),
    ...at,
    sessionId: z.string(),
    actorId: z.string(),
    parentId: z.string().nullable(),
    machineId: z.string().nullable(),
    /** What a person calls this actor: `turn 2`, `read_file · call_1`. */
    label: z.string(),
  }),
  /** An event was delivered to a machine actor (payload bounded: long values are cut). */
  z.object({
    kind: z.literal('event'),
    ...at,
    sessionId: z.string(),
    sourceId: z.string().nullable(),
    event: z.looseObject({ type: z.string() }),
  }),
  /** A named action ran. */
  z.object({ kind: z.literal('action'), ...at, sessionId: z.string(), action: z.string() }),
  /** One microstep: the transitions taken and the state value right after them. */
  z.object({
    kind: z.literal('transition'),
    ...at,
    sessionId: z.string(),
    eventType: z.string(),
    transitions: z.array(z.object({ source: z.string(), targets: z.array(z.string()) })),
    value: StateValueSchema,
  }),
  /** A machine actor's snapshot after a macrostep (and its status: active, done, error, stopped). */
  z.object({
    kind: z.literal('snapshot'),
    ...at,
    sessionId: z.string(),
    eventType: z.string(),
    value: StateValueSchema,
    status: ActorStatusSchema,
    error: z.string().optional(),
  }),
  z.object({ kind: z.literal('agent'), ...at, event: AgentEventSchema }),
  /** The recorder could not record an inspection event; the run itself was not affected. */
  z.object({ kind: z.literal('recorderError'), ...at, message: z.string() }),
]);
export type TraceEntry = z.infer<typeof TraceEntrySchema>;
export type TraceEntryKind = TraceEntry['kind'];
export type TraceEntryOf<K extends TraceEntryKind> = Extract<TraceEntry, { kind: K }>;

/** A trace line before `i` and `t` are stamped on it. */
export type TraceEntryBody = TraceEntry extends infer E ? (E extends TraceEntry ? Omit<E, 'i' | 't'> : never) : never;

export interface Trace {
  header: TraceHeader;
  entries: TraceEntry[];
}

export class TraceFormatError extends Error {
  override readonly name = 'TraceFormatError';
  constructor(
    /** 1-based line number in the JSONL text. */
    readonly line: number,
    message: string,
  ) {
    super(`trace line ${line}: ${message}`);
  }
}

/** Parses and validates a JSONL trace; throws `TraceFormatError` naming the first bad line. */
export function parseTrace(text: string): Trace {
  const lines = text.split('\n');
  let header: TraceHeader | null = null;
  const entries: TraceEntry[] = [];
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new TraceFormatError(index + 1, 'not valid JSON');
    }
    if (header === null) {
      const parsed = TraceHeaderSchema.safeParse(value);
      if (!parsed.success)
        throw new TraceFormatError(
          index + 1,
          `expected the header {"kind":"header","format":"${TRACE_FORMAT}","version":${TRACE_VERSION},…}`,
        );
      header = parsed.data;
      return;
    }
    const parsed = TraceEntrySchema.safeParse(value);
    if (!parsed.success) throw new TraceFormatError(index + 1, z.prettifyError(parsed.error).replace(/\n/g, '; '));
    if (parsed.data.i !== entries.length)
      throw new TraceFormatError(index + 1, `entry index ${parsed.data.i}, expected ${entries.length}`);
    entries.push(parsed.data);
  });
  if (header === null) throw new TraceFormatError(1, 'empty trace: no header line');
  return { header, entries };
}
