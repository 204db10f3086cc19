import { z } from 'zod';
import { ErrorKindSchema, modelError } from '../domain/errors.js';
import type { Usage } from '../domain/messages.js';

/**
 * The Model port's stream events as zod schemas: the runtime checks every event a model yields
 * against them (the model stream boundary). Unknown extra fields are dropped.
 */

/** A token count as providers send it: anything but a finite non-negative integer counts as 0. */
const usageCountOf = (value: unknown): number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;

/** Usage must be an object; its counts are sanitized (a NaN, negative or string count is 0, never NaN). */
export const StreamUsageSchema = z.record(z.string(), z.unknown()).transform((raw): Usage => ({
  input: usageCountOf(raw.input),
  output: usageCountOf(raw.output),
  ...(raw.cacheRead !== undefined ? { cacheRead: usageCountOf(raw.cacheRead) } : {}),
  ...(raw.cacheWrite !== undefined ? { cacheWrite: usageCountOf(raw.cacheWrite) } : {}),
}));

/** A garbage retry-after or status is dropped, not trusted: the kind alone decides retryability. */
const optionalDelay = z
  .unknown()
  .optional()
  .transform((value) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined));
const optionalStatus = z
  .unknown()
  .optional()
  .transform((value) => (typeof value === 'number' && Number.isInteger(value) ? value : undefined));

export const StreamErrorSchema = z
  .object({
    kind: ErrorKindSchema,
    message: z.string().optional(),
    retryAfterMs: optionalDelay,
    status: optionalStatus,
  })
  .transform(({ kind, message, retryAfterMs, status }) => modelError(kind, message, { retryAfterMs, status }));

const toolIndex = z.number().int().nonnegative();

export const ModelStreamEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('start'), model: z.string().optional() }),
  z.object({ type: z.literal('thinkingDelta'), delta: z.string() }),
  z.object({ type: z.literal('textDelta'), delta: z.string() }),
  z.object({ type: z.literal('toolCallStart'), index: toolIndex, id: z.string(), name: z.string() }),
  z.object({ type: z.literal('toolCallDelta'), index: toolIndex, argumentsDelta: z.string() }),
  z.object({ type: z.literal('toolCallEnd'), index: toolIndex }),
  z.object({ type: z.literal('usage'), usage: StreamUsageSchema }),
  z.object({ type: z.literal('done'), stopReason: z.enum(['stop', 'toolUse', 'length']) }),
  z.object({ type: z.literal('error'), error: StreamErrorSchema }),
]);

/**
 * One event of a model's stream. A provider failure is an `error` event, never a thrown rejection:
 * the stream ends after `done` or `error`. Tool-call arguments arrive as JSON fragments.
 */
export type ModelStreamEvent = z.output<typeof ModelStreamEventSchema>;

export type ParsedStreamEvent = { ok: true; event: ModelStreamEvent } | { ok: false; problem: string };

/** Checks one value a model yielded; the problem names the event and the first field at fault. */
export function parseStreamEvent(value: unknown): ParsedStreamEvent {
  let event: ModelStreamEvent | undefined;
  const problem = readStreamEvent(value, {
    text: (kind, delta) => (event = { type: kind === 'text' ? 'textDelta' : 'thinkingDelta', delta }),
    event: (parsed) => (event = parsed),
  });
  return problem === null ? { ok: true, event: event as ModelStreamEvent } : { ok: false, problem };
}

/** Where `readStreamEvent` hands a checked event: a text or thinking delta as its fields, any other as an event. */
export interface StreamEventSink {
  text(kind: 'text' | 'thinking', delta: string): void;
  event(event: ModelStreamEvent): void;
}

/**
 * Checks one value a model yielded and hands it to `sink` (outside the check: what the sink throws
 * is its own); returns null, or the problem, naming the event and the first field at fault. A text
 * delta, most of a stream's events, is checked by hand and handed on as its fields (no event object
 * built, no result wrapper); a tool-call delta is checked by hand too. Both give the schema's answer
 * (the same fields, each read once, extra fields dropped) at a fraction of its cost; anything else,
 * or a delta of the wrong shape, is left to the schema, which names the problem.
 */
export function readStreamEvent(value: unknown, sink: StreamEventSink): string | null {
  let text: string | null = null;
  let kind: 'text' | 'thinking' = 'text';
  let event: ModelStreamEvent | null = null;
  let parsed: ReturnType<typeof ModelStreamEventSchema.safeParse> | null = null;
  try {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const { type } = value as { type?: unknown };
      if (type === 'textDelta' || type === 'thinkingDelta') {
        const { delta } = value as { delta?: unknown };
        if (typeof delta === 'string') {
          text = delta;
          kind = type === 'textDelta' ? 'text' : 'thinking';
        }
      } else if (type === 'toolCallDelta') {
        event = toolCallDeltaOf(value);
      }
    }
    if (text === null && event === null) parsed = ModelStreamEventSchema.safeParse(value);
  } catch (error) {
    // A getter or proxy that throws while it is read.
    return `an event that cannot be read (${error instanceof Error ? error.message : String(error)})`;
  }
  if (text !== null) {
    sink.text(kind, text);
    return null;
  }
  if (event === null) {
    if (!parsed?.success) {
      const issue = parsed?.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      return `an event of the wrong shape (${where}${issue?.message ?? 'invalid'}): ${preview(value)}`;
    }
    event = parsed.data;
  }
  sink.event(event);
  return null;
}

function toolCallDeltaOf(value: object): ModelStreamEvent | null {
  const { index, argumentsDelta } = value as { index?: unknown; argumentsDelta?: unknown };
  return typeof argumentsDelta === 'string' && typeof index === 'number' && Number.isSafeInteger(index) && index >= 0
    ? { type: 'toolCallDelta', index, argumentsDelta }
    : null;
}

/** A bounded rendering of a value for an error message (a hostile event may be huge). */
export function preview(value: unknown, max = 160): string {
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
