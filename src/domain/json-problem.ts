/**
 * What JSON cannot hold in `value`, at the first place found (`data.amount is a BigInt`), or null.
 * Sessions, traces and streams keep values as JSON: a value JSON would change or drop is refused
 * when it is handed over, not lost later. Object properties set to undefined are dropped by JSON
 * and allowed. A getter or proxy that throws while it is read is a problem too, never a throw.
 */
export function jsonProblem(value: unknown, path: string): string | null {
  // Most progress updates are a number or a string: no walk, no allocation.
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return null;
  try {
    const found = walk(value, []);
    return found && `${path}${found.at}${found.what}`;
  } catch (error) {
    return `${path} could not be read (${error instanceof Error ? error.message : 'a throw'})`;
  }
}

/** Where below the value (`.a[2]`) and what is wrong there; the path is built only for a problem. */
interface Found {
  at: string;
  what: string;
}

/** `ancestors`: the objects on the way down (a cycle is one of them met again). */
function walk(value: unknown, ancestors: object[]): Found | null {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return null;
    case 'number':
      return Number.isFinite(value) ? null : { at: '', what: ` is ${value} (JSON has no such number)` };
    case 'bigint':
      return { at: '', what: ' is a BigInt' };
    case 'function':
      return { at: '', what: ' is a function' };
    case 'symbol':
      return { at: '', what: ' is a symbol' };
    case 'undefined':
      return { at: '', what: ' is undefined' };
  }
  if (value === null) return null;
  const object = value as object;
  if (ancestors.includes(object)) return { at: '', what: ' refers back to itself (a cycle)' };
  const array = Array.isArray(object);
  if (!array) {
    const prototype: unknown = Object.getPrototypeOf(object);
    if (prototype !== Object.prototype && prototype !== null)
      return { at: '', what: ` is ${kindOf(object)} (JSON would change it)` };
  }
  ancestors.push(object);
  let found: Found | null = null;
  if (array) {
    const items = object as unknown[];
    for (let index = 0; index < items.length && !found; index++) {
      found = walk(items[index], ancestors);
      if (found) found.at = `[${index}]${found.at}`;
    }
  } else {
    const record = object as Record<string, unknown>;
    // for…in allocates no key array (a third of the check's time on a small object); own keys only, as JSON.
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      const item = record[key];
      if (item === undefined) continue;
      found = walk(item, ancestors);
      if (found) {
        found.at = `.${key}${found.at}`;
        break;
      }
    }
  }
  ancestors.pop();
  return found;
}

function kindOf(object: object): string {
  const name = (object as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? `a ${name}` : 'not a plain object';
}
