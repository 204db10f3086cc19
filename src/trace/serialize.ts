/**
 * Converts any value to plain JSON data, within limits: inspection payloads carry Maps, errors,
 * actor references, functions and cycles, and one trace line must never throw or explode in size.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export interface JsonLimits {
  /** Deeper values become `"[…]"`. */
  maxDepth: number;
  /** Longer strings are cut and end with `…`. */
  maxString: number;
  /** Arrays, Maps, Sets and objects keep this many items; the rest is counted in a marker. */
  maxItems: number;
}

/** For the agent events: they are plain data already; the limits only guard against runaway values. */
export const AGENT_EVENT_LIMITS: JsonLimits = { maxDepth: 24, maxString: 1_000_000, maxItems: 100_000 };
/** For inspection payloads (event payloads, actor outputs): enough to read, small enough to scroll. */
export const INSPECTION_LIMITS: JsonLimits = { maxDepth: 5, maxString: 300, maxItems: 20 };

export function toJsonValue(value: unknown, limits: JsonLimits): JsonValue {
  return convert(value, limits, 0, new Set());
}

function convert(value: unknown, limits: JsonLimits, depth: number, seen: Set<object>): JsonValue {
  switch (typeof value) {
    case 'string':
      return value.length > limits.maxString ? `${value.slice(0, limits.maxString)}…` : value;
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'boolean':
      return value;
    case 'bigint':
      return `${value.toString()}n`;
    case 'undefined':
      return null;
    case 'symbol':
      return value.toString();
    case 'function':
      return `[function ${value.name || 'anonymous'}]`;
  }
  if (value === null) return null;
  const object = value as object;
  if (seen.has(object)) return '[circular]';
  if (depth >= limits.maxDepth) return '[…]';
  seen.add(object);
  try {
    if (object instanceof Error)
      return { name: object.name, message: convert(object.message, limits, depth + 1, seen) };
    if (object instanceof Date) return object.toISOString();
    if (object instanceof Map)
      return items(
        [...object.entries()].map(([key, item]) => [String(key), item]),
        limits,
        depth,
        seen,
      );
    if (object instanceof Set) return list([...object], limits, depth, seen);
    if (Array.isArray(object)) return list(object, limits, depth, seen);
    if (isActorRef(object)) return `[actor ${object.sessionId}]`;
    return items(Object.entries(object), limits, depth, seen);
  } finally {
    seen.delete(object);
  }
}

function list(values: readonly unknown[], limits: JsonLimits, depth: number, seen: Set<object>): JsonValue[] {
  const kept = values.slice(0, limits.maxItems).map((item) => convert(item, limits, depth + 1, seen));
  if (values.length > limits.maxItems) kept.push(`[+${values.length - limits.maxItems} more]`);
  return kept;
}

function items(
  entries: ReadonlyArray<[string, unknown]>,
  limits: JsonLimits,
  depth: number,
  seen: Set<object>,
): { [key: string]: JsonValue } {
  const result: { [key: string]: JsonValue } = {};
  for (const [key, item] of entries.slice(0, limits.maxItems)) {
    if (typeof item === 'function') continue;
    result[key] = convert(item, limits, depth + 1, seen);
  }
  if (entries.length > limits.maxItems) result['…'] = `[+${entries.length - limits.maxItems} more]`;
  return result;
}

/** XState actor references are live objects with a system behind them: name them, never walk them. */
function isActorRef(object: object): object is { sessionId: string } {
  return (
    'sessionId' in object &&
    typeof object.sessionId === 'string' &&
    'send' in object &&
    typeof object.send === 'function'
  );
}
