import type { HrTime } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { OtlpAnyValue, OtlpKeyValue, OtlpSpan } from './otlp-receiver.js';

type Kind = 'INTERNAL' | 'SERVER' | 'CLIENT' | 'PRODUCER' | 'CONSUMER';
type StatusCode = 'UNSET' | 'OK' | 'ERROR';

/** A span in one shape whichever way it was collected (the SDK's in-memory exporter or OTLP/HTTP). */
export interface FlatSpan {
  traceId: string;
  spanId: string;
  parentId: string | undefined;
  name: string;
  kind: Kind;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  events: SpanEventNode[];
  status: { code: StatusCode; message?: string };
}

export interface SpanEventNode {
  name: string;
  attributes: Record<string, unknown>;
}

/** What the tests assert: the tree without ids and times. */
export interface SpanNode {
  name: string;
  kind: Kind;
  attributes: Record<string, unknown>;
  events: SpanEventNode[];
  status: { code: StatusCode; message?: string };
  children: SpanNode[];
}

const API_KINDS: Kind[] = ['INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];
const STATUS_CODES: StatusCode[] = ['UNSET', 'OK', 'ERROR'];

const nanos = ([seconds, ns]: HrTime): bigint => BigInt(seconds) * 1_000_000_000n + BigInt(ns);
const status = (code: number, message: string | undefined) => ({
  code: STATUS_CODES[code] ?? 'UNSET',
  ...(message ? { message } : {}),
});

export function fromReadable(span: ReadableSpan): FlatSpan {
  return {
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentId: span.parentSpanContext?.spanId,
    name: span.name,
    kind: API_KINDS[span.kind] as Kind,
    startNs: nanos(span.startTime),
    endNs: nanos(span.endTime),
    attributes: { ...span.attributes },
    events: span.events.map((event) => ({ name: event.name, attributes: { ...event.attributes } })),
    status: status(span.status.code, span.status.message),
  };
}

function valueOf(value: OtlpAnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  throw new Error(`unexpected OTLP value ${JSON.stringify(value)}`);
}

const attributesOf = (list: OtlpKeyValue[] | undefined) =>
  Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));

/** OTLP span kinds count from SPAN_KIND_UNSPECIFIED = 0 (INTERNAL = 1). */
export function fromOtlp(span: OtlpSpan): FlatSpan {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    parentId: span.parentSpanId || undefined,
    name: span.name,
    kind: API_KINDS[span.kind - 1] as Kind,
    startNs: BigInt(span.startTimeUnixNano),
    endNs: BigInt(span.endTimeUnixNano),
    attributes: attributesOf(span.attributes),
    events: (span.events ?? []).map((event) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
    status: status(span.status?.code ?? 0, span.status?.message),
  };
}

/**
 * Children in start order. The SDK stamps starts in whole milliseconds, so ties are common: they go by
 * tool call id (tests number call ids in call order), else keep the export order (end order; the sort is stable).
 */
function order(a: FlatSpan, b: FlatSpan): number {
  if (a.startNs !== b.startNs) return a.startNs < b.startNs ? -1 : 1;
  // Code-unit order: localeCompare would ignore the separator and mix the two keys.
  const key = (span: FlatSpan) => `${String(span.attributes['gen_ai.tool.call.id'] ?? '')}\u0000${span.name}`;
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}

/** The forest of spans (roots: spans with no parent among them), as asserted by the tests. */
export function spanTree(spans: readonly FlatSpan[]): SpanNode[] {
  const byParent = new Map<string | undefined, FlatSpan[]>();
  const ids = new Set(spans.map((span) => span.spanId));
  for (const span of spans) {
    const parent = span.parentId !== undefined && ids.has(span.parentId) ? span.parentId : undefined;
    byParent.set(parent, [...(byParent.get(parent) ?? []), span]);
  }
  const build = (span: FlatSpan): SpanNode => ({
    name: span.name,
    kind: span.kind,
    attributes: span.attributes,
    events: span.events,
    status: span.status,
    children: (byParent.get(span.spanId) ?? []).sort(order).map(build),
  });
  return (byParent.get(undefined) ?? []).sort(order).map(build);
}

/**
 * The SDK stamps a span's start with `Date.now()` (whole milliseconds) and its end as start plus a
 * high-resolution duration: a child that really ends first may appear to end up to 1 ms after its parent.
 */
const CLOCK_SLACK_NS = 1_000_000n;

/** Every span lies within its parent's time (to the SDK's clock slack) and its parent was exported. */
export function timingProblems(spans: readonly FlatSpan[]): string[] {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const problems: string[] = [];
  for (const span of spans) {
    if (span.endNs < span.startNs) problems.push(`${span.name} ends before it starts`);
    if (span.parentId === undefined) continue;
    const parent = byId.get(span.parentId);
    if (!parent) problems.push(`${span.name}: parent ${span.parentId} was never exported`);
    else if (span.startNs < parent.startNs || span.endNs > parent.endNs + CLOCK_SLACK_NS) {
      problems.push(`${span.name} lies outside ${parent.name}`);
    }
  }
  return problems;
}
