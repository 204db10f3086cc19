import { describe, expect, it } from 'vitest';
import { ModelStreamEventSchema, parseStreamEvent } from '../../src/model/stream-events.js';

/** What the schema alone answers: the event it keeps, or that it refuses the value. */
function bySchema(value: unknown): { ok: true; event: unknown } | { ok: false } {
  const parsed = ModelStreamEventSchema.safeParse(value);
  return parsed.success ? { ok: true, event: parsed.data } : { ok: false };
}

class Delta {
  readonly type = 'textDelta';
  constructor(readonly delta: string) {}
}

const values: unknown[] = [
  { type: 'textDelta', delta: 'hi' },
  { type: 'textDelta', delta: '' },
  { type: 'textDelta', delta: 'hi', extra: 1, index: 3 },
  { type: 'thinkingDelta', delta: 'hm' },
  { type: 'textDelta', delta: 3 },
  { type: 'textDelta' },
  { type: 'thinkingDelta', delta: null },
  { type: 'toolCallDelta', index: 0, argumentsDelta: '{"a"' },
  { type: 'toolCallDelta', index: 2, argumentsDelta: '', id: 'x' },
  { type: 'toolCallDelta', index: -0, argumentsDelta: 'x' },
  { type: 'toolCallDelta', index: -1, argumentsDelta: 'x' },
  { type: 'toolCallDelta', index: 1.5, argumentsDelta: 'x' },
  { type: 'toolCallDelta', index: Number.NaN, argumentsDelta: 'x' },
  { type: 'toolCallDelta', index: 2 ** 60, argumentsDelta: 'x' },
  { type: 'toolCallDelta', index: '0', argumentsDelta: 'x' },
  { type: 'toolCallDelta', index: 0, argumentsDelta: 7 },
  { type: 'toolCallDelta', argumentsDelta: 'x' },
  Object.assign(Object.create(null) as object, { type: 'textDelta', delta: 'no prototype' }),
  new Delta('a class instance'),
  [{ type: 'textDelta', delta: 'in an array' }],
  Object.assign(['x'], { type: 'textDelta', delta: 'an array with fields' }),
  'textDelta',
  null,
  undefined,
  42,
  { type: 'start' },
  { type: 'done', stopReason: 'stop' },
];

describe('parseStreamEvent', () => {
  it('answers as the schema does for every delta, well formed or not', () => {
    for (const value of values) {
      const parsed = parseStreamEvent(value);
      const expected = bySchema(value);
      expect({ value, ok: parsed.ok }).toEqual({ value, ok: expected.ok });
      if (parsed.ok && expected.ok) expect(parsed.event).toStrictEqual(expected.event);
    }
  });

  it('reads each field of a delta once: a getter that changes its answer cannot slip past the check', () => {
    let reads = 0;
    const fickle = {
      type: 'textDelta',
      get delta(): unknown {
        reads++;
        return reads === 1 ? 'first' : 42;
      },
    };
    const parsed = parseStreamEvent(fickle);
    expect(parsed).toEqual({ ok: true, event: { type: 'textDelta', delta: 'first' } });
    expect(reads).toBe(1);
  });

  it('reports a delta whose field throws when read as an event that cannot be read', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('no reading me');
        },
      },
    );
    const parsed = parseStreamEvent(hostile);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toContain('no reading me');
  });

  it('names the field at fault of a delta of the wrong shape', () => {
    const parsed = parseStreamEvent({ type: 'toolCallDelta', index: -1, argumentsDelta: 'x' });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toMatch(/^an event of the wrong shape \(index: /);
  });
});
