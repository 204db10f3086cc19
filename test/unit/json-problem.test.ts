import { describe, expect, it } from 'vitest';
import { jsonCopy, jsonProblem } from '../../src/domain/json-problem.js';

/** The one rule for values agentchart publishes and stores: what JSON holds as it is, or where it does not. */
describe('jsonProblem / jsonCopy', () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = { back: [cyclic] };
  const shared = { n: 1 };

  it.each<[string, unknown, string]>([
    ['a BigInt deep down', { a: [{ b: 1 }, { c: 2n }] }, 'p.a[1].c is a BigInt'],
    ['a cycle through an array', cyclic, 'p.self.back[0] refers back to itself (a cycle)'],
    ['a function', [() => 1], 'p[0] is a function'],
    ['a symbol', { s: Symbol('x') }, 'p.s is a symbol'],
    ['undefined itself', undefined, 'p is undefined'],
    ['undefined in an array', [1, undefined], 'p[1] is undefined'],
    ['NaN', { r: Number.NaN }, 'p.r is NaN (JSON has no such number)'],
    ['Infinity', -Infinity, 'p is -Infinity (JSON has no such number)'],
    ['a Date', { at: new Date(0) }, 'p.at is a Date (JSON would change it)'],
    ['a Map', new Map(), 'p is a Map (JSON would change it)'],
    ['a class instance', { e: new (class Point {})() }, 'p.e is a Point (JSON would change it)'],
  ])('%s: named with its path', (_name, value, problem) => {
    expect(jsonProblem(value, 'p')).toBe(problem);
    expect(jsonCopy(value, 'p')).toEqual({ problem });
  });

  it('a getter or a proxy that throws while read is a problem, never a throw', () => {
    const getter = {
      get broken(): never {
        throw new Error('no access');
      },
    };
    const proxy = new Proxy(
      {},
      {
        getPrototypeOf() {
          throw new Error('trapped');
        },
      },
    );
    expect(jsonProblem(getter, 'p')).toBe('p could not be read (no access)');
    expect(jsonProblem({ x: proxy }, 'p')).toBe('p could not be read (trapped)');
  });

  it('JSON values pass; the copy is what JSON.parse(JSON.stringify(value)) gives, taken now', () => {
    const value: Record<string, unknown> = {
      a: shared,
      b: [shared, null, true, 'x', 1.5, []],
      gone: undefined,
      bare: Object.assign(Object.create(null) as object, { k: 1 }),
    };
    Object.defineProperty(value, 'hidden', { value: 2n, enumerable: false });
    const inherited = Object.assign(Object.create({ fromPrototype: 1n }) as object, { own: 1 });
    expect(jsonProblem(value, 'p')).toBeNull();
    const copy = jsonCopy(value, 'p');
    expect(copy).toEqual({ value: JSON.parse(JSON.stringify(value)) });
    // Taken now: a change to the value afterwards does not reach the copy.
    shared.n = 2;
    expect((copy as { value: { a: { n: number } } }).value.a.n).toBe(1);
    // `__proto__` parsed from JSON is an own property, and stays one in the copy.
    const parsed = JSON.parse('{"__proto__": {"x": 1}}') as object;
    expect(JSON.stringify((jsonCopy(parsed, 'p') as { value: unknown }).value)).toBe('{"__proto__":{"x":1}}');
    expect(Object.getPrototypeOf((jsonCopy(parsed, 'p') as { value: object }).value)).toBe(Object.prototype);
    // Only a non-plain prototype is a problem, not what it carries.
    expect(jsonProblem(inherited, 'p')).toBe('p is not a plain object (JSON would change it)');
    for (const primitive of ['s', 0, false, null]) expect(jsonCopy(primitive, 'p')).toEqual({ value: primitive });
  });
});
