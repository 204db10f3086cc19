/**
 * What JSON cannot hold in `value`, at the first place found (`data.amount is a BigInt`), or null.
 * Sessions, traces and streams keep values as JSON: a value JSON would change or drop is refused
 * when it is handed over, not lost later. Object properties set to undefined are dropped by JSON
 * and allowed. A getter or proxy that throws while it is read is a problem too, never a throw.
 */
export function jsonProblem(value: unknown, path: string): string | null {
  const checked = checkJson(value, path, false);
  return 'problem' in checked ? checked.problem : null;
}

/**
 * `value` as JSON holds it, copied as it is now (a tool that reuses and changes its progress object
 * must not change what was published), or what JSON cannot hold in it, as `jsonProblem` says.
 * Strings, numbers, booleans and null are not copied.
 */
export function jsonCopy(value: unknown, path: string): { value: unknown } | { problem: string } {
  return checkJson(value, path, true);
}

function checkJson(value: unknown, path: string, copy: boolean): { value: unknown } | { problem: string } {
  // Most progress updates are a number or a string: no walk, no allocation.
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return { value };
  if (typeof value === 'number' && Number.isFinite(value)) return { value };
  try {
    const result = walk(value, [], copy);
    return result instanceof Found ? { problem: `${path}${result.at}${result.what}` } : { value: result };
  } catch (error) {
    return { problem: `${path} could not be read (${error instanceof Error ? error.message : 'a throw'})` };
  }
}

/** Where below the value (`.a[2]`) and what is wrong there; the path is built only for a problem. */
class Found {
  at = '';
  constructor(readonly what: string) {}
}

/**
 * The value (a copy of it when `copy`), or what is wrong in it. `ancestors`: the objects on the way
 * down (a cycle is one of them met again; an object met twice elsewhere is fine).
 */
function walk(value: unknown, ancestors: object[], copy: boolean): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : new Found(` is ${value} (JSON has no such number)`);
    case 'bigint':
      return new Found(' is a BigInt');
    case 'function':
      return new Found(' is a function');
    case 'symbol':
      return new Found(' is a symbol');
    case 'undefined':
      return new Found(' is undefined');
  }
  if (value === null) return value;
  const object = value as object;
  if (ancestors.includes(object)) return new Found(' refers back to itself (a cycle)');
  const array = Array.isArray(object);
  if (!array) {
    const prototype: unknown = Object.getPrototypeOf(object);
    if (prototype !== Object.prototype && prototype !== null)
      return new Found(` is ${kindOf(object)} (JSON would change it)`);
  }
  ancestors.push(object);
  const result = array
    ? walkArray(object as unknown[], ancestors, copy)
    : walkRecord(object as Record<string, unknown>, ancestors, copy);
  ancestors.pop();
  return result;
}

function walkArray(items: unknown[], ancestors: object[], copy: boolean): unknown {
  const copied: unknown[] | null = copy ? new Array<unknown>(items.length) : null;
  for (let index = 0; index < items.length; index++) {
    const item = walk(items[index], ancestors, copy);
    if (item instanceof Found) {
      item.at = `[${index}]${item.at}`;
      return item;
    }
    if (copied) copied[index] = item;
  }
  return copied ?? items;
}

function walkRecord(record: Record<string, unknown>, ancestors: object[], copy: boolean): unknown {
  const copied: Record<string, unknown> | null = copy ? {} : null;
  // for…in allocates no key array (a third of the check's time on a small object); own keys only, as JSON.
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const value = record[key];
    if (value === undefined) continue;
    const item = walk(value, ancestors, copy);
    if (item instanceof Found) {
      item.at = `.${key}${item.at}`;
      return item;
    }
    if (!copied) continue;
    // As JSON.parse does: `__proto__` is a property of the copy, not its prototype.
    if (key === '__proto__')
      Object.defineProperty(copied, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copied[key] = item;
  }
  return copied ?? record;
}

function kindOf(object: object): string {
  const name = (object as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' && name !== 'Object' ? `a ${name}` : 'not a plain object';
}
