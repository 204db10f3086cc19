import { describe, expect, it } from 'vitest';
import type { AgentEvent } from 'agentchart';
import type { Delta } from '../../src/studio/protocol.js';
import { deltaEvents } from '../../src/studio/page/session.js';
import {
  eventBatches,
  hasLongString,
  MAX_MESSAGE,
  MAX_WIRE_STRING,
  wireEvent,
  wireValue,
} from '../../src/studio/wire.js';

const base = { runId: 'run_a', turnIndex: 0 };
const long = 'x'.repeat(MAX_WIRE_STRING + 5);
const cutText = `${'x'.repeat(MAX_WIRE_STRING)}… (5 more characters)`;

const toolEnd = (seq: number, result: string): AgentEvent => ({
  type: 'toolExecutionEnd',
  ...base,
  seq,
  toolCallId: `call_${seq}`,
  toolName: 'read',
  result,
  isError: false,
});

/** A delta as the page reads it: the batch's fields in a stream message. */
const parse = (fields: string) => (JSON.parse(`{"delta":{${fields}}}`) as { delta: Delta }).delta;

describe('events as the page gets them', () => {
  it('are the events themselves when nothing changes (no copy): the agent pays no allocation for them', () => {
    const event = toolEnd(3, 'ok');
    expect(wireValue(event)).toBe(event);
    const start: AgentEvent = { type: 'turnStart', ...base, seq: 1 };
    expect(wireValue(start)).toBe(start);
  });

  it('leave out a live turnEnd’s reply and results, and the messages of a model call (their length instead)', () => {
    const assistant = { role: 'assistant' as const, content: [], stopReason: 'stop' as const, model: 'm' };
    const turnEnd: AgentEvent = { type: 'turnEnd', ...base, seq: 9, reason: 'complete', assistant, toolResults: [] };
    expect(wireValue(turnEnd)).toEqual({ type: 'turnEnd', ...base, seq: 9, reason: 'complete' });
    const call: AgentEvent = {
      type: 'beforeModelCall',
      ...base,
      seq: 2,
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
    };
    expect(wireValue(call)).toEqual({ type: 'beforeModelCall', ...base, seq: 2, model: 'm', messages: { length: 1 } });
  });

  it('cut strings longer than the limit wherever they are, and leave the event itself untouched', () => {
    const event = toolEnd(4, long);
    expect(wireValue(event)).toMatchObject({ result: cutText, toolCallId: 'call_4' });
    expect((event as { result: string }).result).toBe(long);
    const update: AgentEvent = {
      type: 'messageUpdate',
      ...base,
      seq: 5,
      delta: { type: 'text', index: 0, text: long },
    };
    expect(wireValue(update)).toMatchObject({ delta: { type: 'text', text: cutText } });
    const nested: AgentEvent = {
      type: 'toolExecutionStart',
      ...base,
      seq: 6,
      toolCallId: 'call_6',
      toolName: 'write',
      arguments: { files: [{ path: 'a', content: long }] },
    };
    expect(wireValue(nested)).toMatchObject({ arguments: { files: [{ path: 'a', content: cutText }] } });
    expect(JSON.parse(wireEvent(nested, 42))).toMatchObject({ t: 42, arguments: { files: [{ content: cutText }] } });
  });

  it('find a long string at any depth, and treat a nesting deeper than the walk goes as one', () => {
    expect(hasLongString({ a: [{ b: 'short' }], c: 1, d: null })).toBe(false);
    expect(hasLongString({ a: [{ b: long }] })).toBe(true);
    let deep: unknown = 'short';
    for (let depth = 0; depth < 40; depth++) deep = { deep };
    expect(hasLongString(deep)).toBe(true);
  });
});

describe('a live stream’s events, batched', () => {
  it('serialize each batch at once, times beside them (ms after the first), which the page restores', () => {
    const values = [toolEnd(1, 'a'), toolEnd(2, 'b'), toolEnd(3, 'c')].map(wireValue);
    const batches = eventBatches({ values, times: [1_000, 1_004, 1_010] });
    expect(batches).toHaveLength(1);
    expect(batches[0]).toContain('"t0":1000,"at":[0,4,10]');
    const events = deltaEvents(parse(batches[0] as string));
    expect(events.map((event) => [event.seq, event.t])).toEqual([
      [1, 1_000],
      [2, 1_004],
      [3, 1_010],
    ]);
    expect(events[1]).toMatchObject({ type: 'toolExecutionEnd', runId: 'run_a', result: 'b' });
  });

  it('keep each message within the bound (a batch over it is halved; an event larger than it goes alone)', () => {
    const big = 'y'.repeat(MAX_WIRE_STRING - 10);
    const values = Array.from({ length: 10 }, (_, index) => wireValue(toolEnd(index, big)));
    values.push(wireValue(toolEnd(10, 'small')));
    const batches = eventBatches({ values, times: values.map((_, index) => 500 + index) });
    expect(batches.length).toBeGreaterThan(1);
    const seqs: number[] = [];
    for (const batch of batches) {
      const events = deltaEvents(parse(batch));
      expect(batch.length <= MAX_MESSAGE + 200 || events.length === 1).toBe(true);
      for (const event of events) {
        expect(event.t).toBe(500 + event.seq);
        seqs.push(event.seq);
      }
    }
    expect(seqs).toEqual(Array.from({ length: 11 }, (_, index) => index));
  });
});
