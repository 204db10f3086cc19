/**
 * A compact patch between two JSON values, for the per-step records: consecutive checkpoints differ
 * in a few fields (a counter, one more result), so a step stores what changed, not the whole head.
 * An object patch is an object of key patches; an operation is an array: `['=', value]` replaces,
 * `['+', n, items]` keeps an array's first `n` items and appends `items`, `['-']` removes a key.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonPatch = { [key: string]: JsonPatch } | ['='] | ['=', JsonValue] | ['+', number, JsonValue[]] | ['-'];

const isObject = (value: unknown): value is { [key: string]: JsonValue } =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// Keys come from user data (tool arguments): `valueOf` or `__proto__` is a key like any other, never
// the prototype's property or setter.
const own = (object: { [key: string]: JsonValue }, key: string): JsonValue | undefined =>
  Object.hasOwn(object, key) ? object[key] : undefined;
const setOwn = <T>(object: { [key: string]: T }, key: string, value: T): void => {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
};

/** A plain assignment, but `__proto__` is defined as a key (an assignment would set the prototype). */
const setKey = (patch: { [key: string]: JsonPatch }, key: string, value: JsonPatch): void => {
  if (key === '__proto__') setOwn(patch, key, value);
  else patch[key] = value;
};

/** What turns `before` into `after`; undefined when they are equal. */
export function diffJson(before: JsonValue | undefined, after: JsonValue): JsonPatch | undefined {
  if (before === after) return undefined;
  if (typeof after !== 'object' || after === null || typeof before !== 'object' || before === null) {
    return ['=', after];
  }
  if (Array.isArray(after)) {
    if (!Array.isArray(before)) return ['=', after];
    const limit = Math.min(before.length, after.length);
    let kept = 0;
    while (kept < limit && jsonEqual(before[kept], after[kept])) kept++;
    if (kept === before.length && kept === after.length) return undefined;
    return ['+', kept, after.slice(kept)];
  }
  if (Array.isArray(before)) return ['=', after];
  // Steps call this for every key of every checkpoint: one pass over `after`, a second only when a key went away.
  let patch: { [key: string]: JsonPatch } | undefined;
  let shared = 0;
  for (const key of Object.keys(after)) {
    const next = after[key];
    // A key whose value is undefined is absent, as in JSON.
    if (next === undefined) continue;
    const previous = own(before, key);
    if (previous !== undefined) shared++;
    const inner = previous === undefined ? (['=', next] as JsonPatch) : diffJson(previous, next);
    if (inner !== undefined) setKey((patch ??= {}), key, inner);
  }
  const beforeKeys = Object.keys(before);
  if (beforeKeys.length !== shared) {
    for (const key of beforeKeys) {
      if (before[key] !== undefined && own(after, key) === undefined) setKey((patch ??= {}), key, ['-']);
    }
  }
  return patch;
}

/** `before` with `patch` applied (a new value; `before` is not changed). */
export function applyJsonPatch(before: JsonValue | undefined, patch: JsonPatch | undefined): JsonValue {
  if (patch === undefined) return before as JsonValue;
  if (Array.isArray(patch)) {
    if (patch[0] === '=') return patch[1] as JsonValue;
    if (patch[0] === '+') {
      const kept = Array.isArray(before) ? before.slice(0, patch[1]) : [];
      return kept.concat(patch[2]);
    }
    throw new Error(`a patch operation "${String(patch[0])}" outside an object`);
  }
  const result: { [key: string]: JsonValue } = isObject(before) ? { ...before } : {};
  for (const [key, inner] of Object.entries(patch)) {
    if (Array.isArray(inner) && inner[0] === '-') delete result[key];
    else setOwn(result, key, applyJsonPatch(own(result, key), inner));
  }
  return result;
}

/** Structural equality of JSON values (key order ignored); shared references are equal at once. */
export function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a).filter((key) => a[key] !== undefined);
    if (keys.length !== Object.keys(b).filter((key) => b[key] !== undefined).length) return false;
    for (const key of keys) if (!jsonEqual(a[key], own(b, key))) return false;
    return true;
  }
  return false;
}
