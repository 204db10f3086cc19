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
  let parsed: ReturnType<typeof ModelStreamEventSchema.safeParse>;
  try {
    const delta = deltaEvent(value);
    if (delta) return { ok: true, event: delta };
    parsed = ModelStreamEventSchema.safeParse(value);
  } catch (error) {
    // A getter or proxy that throws while it is read.
    return {
      ok: false,
      problem: `an event that cannot be read (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  if (parsed.success) return { ok: true, event: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return {
    ok: false,
    problem: `an event of the wrong shape (${where}${issue?.message ?? 'invalid'}): ${preview(value)}`,
  };
}

/**
 * The deltas, most of a stream's events, checked by hand: the schema's answer (the same fields, each
 * read once, extra fields dropped) at a fraction of its cost. Anything else, or a delta of the wrong
 * shape, is left to the schema, which names the problem.
 */
function deltaEvent(value: unknown): ModelStreamEvent | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const { type } = value as { type?: unknown };
  if (type === 'textDelta' || type === 'thinkingDelta') {
    const { delta } = value as { delta?: unknown };
    return typeof delta === 'string' ? { type, delta } : null;
  }
  if (type === 'toolCallDelta') {
    const { index, argumentsDelta } = value as { index?: unknown; argumentsDelta?: unknown };
    return typeof argumentsDelta === 'string' && typeof index === 'number' && Number.isSafeInteger(index) && index >= 0
      ? { type, index, argumentsDelta }
      : null;
  }
  return null;
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
