import { describe, expect, it } from 'vitest';
import type { AgentEvent } from 'agentchart';
import type { Delta } from '../../src/studio/protocol.js';
import { deltaEvents } from '../../src/studio/page/session.js';
import {
  eventBatches,
  mayHoldLongString,
  MAX_MESSAGE,
  MAX_WIRE_STRING,
  wireEvent,
  wireJson,
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
    expect(wireValue(event)).toBe(event);
    expect(JSON.parse(wireEvent(event, 7))).toMatchObject({ t: 7, result: cutText, toolCallId: 'call_4' });
    expect((event as { result: string }).result).toBe(long);
    const update: AgentEvent = {
      type: 'messageUpdate',
      ...base,
      seq: 5,
      delta: { type: 'text', index: 0, text: long },
    };
    expect(JSON.parse(wireEvent(update, 8))).toMatchObject({ delta: { type: 'text', text: cutText } });
    const nested: AgentEvent = {
      type: 'toolExecutionStart',
      ...base,
      seq: 6,
      toolCallId: 'call_6',
      toolName: 'write',
      arguments: { files: [{ path: 'a', content: long }] },
    };
    expect(JSON.parse(wireEvent(nested, 42))).toMatchObject({ t: 42, arguments: { files: [{ content: cutText }] } });
    const [batch] = eventBatches({ values: [update, toolEnd(7, 'short')].map(wireValue), times: [1, 2] });
    const events = deltaEvents(parse(batch as string));
    expect(events.map((wired) => ('delta' in wired ? wired.delta : wired))).toMatchObject([
      { type: 'text', text: cutText },
      { result: 'short' },
    ]);
  });
});

describe('finding a long string in JSON without walking the value', () => {
  const quoted = (text: string) => JSON.stringify({ a: 'short', text, b: [1, 2] });

  it('finds one wherever it lies, of any length past the limit', () => {
    for (const length of [MAX_WIRE_STRING + 1, 2 * MAX_WIRE_STRING, 2 * MAX_WIRE_STRING + 1, 5 * MAX_WIRE_STRING + 3])
      for (const pad of [0, 1, 7_777, MAX_WIRE_STRING - 3, MAX_WIRE_STRING + 11]) {
        const json = JSON.stringify(['p'.repeat(pad), 'x'.repeat(length), 'after']);
        expect(mayHoldLongString(json), `length ${length} after ${pad}`).toBe(true);
      }
  });

  it('is not fooled by escaped quotes or backslashes inside the long string', () => {
    const quotes = '"'.repeat(MAX_WIRE_STRING + 1);
    expect(mayHoldLongString(quoted(quotes))).toBe(true);
    expect(mayHoldLongString(quoted(`a\\"b`.repeat(MAX_WIRE_STRING / 4)))).toBe(true);
    expect(wireJson({ quotes })).toBe(
      JSON.stringify({ quotes: `${'"'.repeat(MAX_WIRE_STRING)}… (1 more characters)` }),
    );
  });

  it('never throws: a value JSON cannot hold (the agent refuses them at the door; a last line here) is written as text', () => {
    const cyclic: Record<string, unknown> = { step: 2 };
    cyclic.self = cyclic;
    expect(JSON.parse(wireJson([{ bytes: 10n }, cyclic]))).toEqual([{ bytes: '10n' }, { step: 2, self: '[circular]' }]);
    expect(JSON.parse(wireJson({ text: long, n: 1n }))).toEqual({ text: cutText, n: '1n' });
  });

  it('answers no for many short strings, however long the JSON', () => {
    const shorts = Array.from({ length: 5_000 }, (_, index) => `"quoted" \\ ${'s'.repeat(index % 50)}`);
    expect(JSON.stringify(shorts).length).toBeGreaterThan(5 * MAX_WIRE_STRING);
    expect(mayHoldLongString(JSON.stringify(shorts))).toBe(false);
    expect(mayHoldLongString(quoted('x'.repeat(MAX_WIRE_STRING)))).toBe(false);
    expect(wireJson(shorts)).toBe(JSON.stringify(shorts));
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
