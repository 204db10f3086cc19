import { describe, expect, it, vi } from 'vitest';
import { SimulatedClock } from 'xstate';
import type { Message, ModelRequest, ModelStreamEvent } from 'agentchart';
import { modelError, StreamAccumulator } from 'agentchart/model-kit';
import { scriptedModel } from 'agentchart/testing';

const request = (text = 'hi'): ModelRequest => ({
  systemPrompt: 'be brief',
  messages: [{ role: 'user', content: text }],
  tools: [{ name: 'read', description: 'reads', parameters: { type: 'object' } }],
});

async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
const aborted: ModelStreamEvent = { type: 'error', error: modelError('aborted', 'request aborted') };

describe('scriptedModel streaming', () => {
  it('streams thinking, text in pieces, tool calls in fragments, usage, then done', async () => {
    const model = scriptedModel([
      {
        thinking: 'think',
        text: 'Hello world',
        toolCalls: [
          { name: 'read', arguments: { path: 'a.ts' } },
          { id: 'mine', name: 'ls', rawArguments: '' },
        ],
        usage: { input: 12, output: 5 },
      },
    ]);
    const events = await collect(model.stream(request(), { signal: new AbortController().signal }));
    expect(events).toEqual([
      { type: 'start', model: 'scripted' },
      { type: 'thinkingDelta', delta: 'th' },
      { type: 'thinkingDelta', delta: 'in' },
      { type: 'thinkingDelta', delta: 'k' },
      { type: 'textDelta', delta: 'Hell' },
      { type: 'textDelta', delta: 'o wo' },
      { type: 'textDelta', delta: 'rld' },
      { type: 'toolCallStart', index: 0, id: 'call_0_0', name: 'read' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '{"pat' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: 'h":"a' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '.ts"}' },
      { type: 'toolCallEnd', index: 0 },
      { type: 'toolCallStart', index: 1, id: 'mine', name: 'ls' },
      { type: 'toolCallEnd', index: 1 },
      { type: 'usage', usage: { input: 12, output: 5 } },
      { type: 'done', stopReason: 'toolUse' },
    ]);
  });

  it('defaults to stop without tool calls and honours an explicit stop reason', async () => {
    const model = scriptedModel([{ text: 'a' }, { text: 'b', stopReason: 'length' }, {}]);
    const signal = new AbortController().signal;
    expect(await collect(model.stream(request(), { signal }))).toEqual([
      { type: 'start', model: 'scripted' },
      { type: 'textDelta', delta: 'a' },
      { type: 'done', stopReason: 'stop' },
    ]);
    expect((await collect(model.stream(request(), { signal }))).at(-1)).toEqual({ type: 'done', stopReason: 'length' });
    expect(await collect(model.stream(request(), { signal }))).toEqual([
      { type: 'start', model: 'scripted' },
      { type: 'done', stopReason: 'stop' },
    ]);
  });

  it('never splits a surrogate pair across text deltas', async () => {
    const model = scriptedModel([{ text: 'a😀b😀' }]);
    const events = await collect(model.stream(request(), { signal: new AbortController().signal }));
    const deltas = events.flatMap((event) => (event.type === 'textDelta' ? [event.delta] : []));
    expect(deltas).toEqual(['a😀', 'b😀']);
  });

  it('cuts the last tool call of a length-stopped entry in half with no toolCallEnd', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'w', arguments: { n: 1 } },
          { name: 'w', rawArguments: '{"text":"abcdefgh"}' },
        ],
        stopReason: 'length',
      },
    ]);
    const events = await collect(model.stream(request(), { signal: new AbortController().signal }));
    expect(events.slice(6)).toEqual([
      { type: 'toolCallStart', index: 1, id: 'call_0_1', name: 'w' },
      { type: 'toolCallDelta', index: 1, argumentsDelta: '{"t' },
      { type: 'toolCallDelta', index: 1, argumentsDelta: 'ext' },
      { type: 'toolCallDelta', index: 1, argumentsDelta: '":"' },
      { type: 'done', stopReason: 'length' },
    ]);
    const acc = new StreamAccumulator(model.name);
    for (const event of events) acc.push(event);
    expect(acc.finish()).toEqual({
      role: 'assistant',
      content: [
        { type: 'toolCall', id: 'call_0_0', name: 'w', arguments: { n: 1 } },
        { type: 'toolCall', id: 'call_0_1', name: 'w', arguments: {} },
      ],
      stopReason: 'length',
      model: 'scripted',
    });
    expect(acc.invalidToolCalls).toEqual([
      { id: 'call_0_1', name: 'w', index: 1, providerIndex: 1, rawArguments: '{"text":"', reason: 'truncated' },
    ]);
  });

  it('cuts the stream with a classified error after the content', async () => {
    const model = scriptedModel([
      { text: 'par', error: { kind: 'rateLimit', retryAfterMs: 2000 } },
      { error: { kind: 'auth', message: 'bad key', status: 401 } },
    ]);
    const signal = new AbortController().signal;
    expect(await collect(model.stream(request(), { signal }))).toEqual([
      { type: 'start', model: 'scripted' },
      { type: 'textDelta', delta: 'p' },
      { type: 'textDelta', delta: 'a' },
      { type: 'textDelta', delta: 'r' },
      { type: 'error', error: { kind: 'rateLimit', message: 'rateLimit', retryable: true, retryAfterMs: 2000 } },
    ]);
    expect((await collect(model.stream(request(), { signal }))).at(-1)).toEqual({
      type: 'error',
      error: { kind: 'auth', message: 'bad key', retryable: false, status: 401 },
    });
  });
});

describe('scriptedModel requests and overruns', () => {
  it('records deep copies of every request and counts calls', async () => {
    const model = scriptedModel([{ text: 'a' }, { text: 'b' }], { name: 'm', pricing: { input: 3, output: 15 } });
    const first = request('one');
    const signal = new AbortController().signal;
    await collect(model.stream(first, { signal }));
    (first.messages[0] as Extract<Message, { role: 'user' }>).content = 'mutated';
    first.messages.push({ role: 'user', content: 'extra' });
    await collect(model.stream({ messages: [], tools: [] }, { signal }));
    expect(model.name).toBe('m');
    expect(model.pricing).toEqual({ input: 3, output: 15 });
    expect(model.calls).toBe(2);
    expect(model.requests).toEqual([
      {
        systemPrompt: 'be brief',
        messages: [{ role: 'user', content: 'one' }],
        tools: [{ name: 'read', description: 'reads', parameters: { type: 'object' } }],
      },
      { messages: [], tools: [] },
    ]);
    expect(model.overruns).toEqual([]);
  });

  it('throws from the iterator on a call beyond the script and records the overrun', async () => {
    const model = scriptedModel([{ text: 'only' }]);
    const signal = new AbortController().signal;
    await collect(model.stream(request(), { signal }));
    const stream = model.stream(request('again'), { signal });
    await expect(collect(stream)).rejects.toThrow(
      "scriptedModel 'scripted': model call #1 (0-based) is beyond a script of 1 entries",
    );
    expect(model.overruns).toEqual([
      { callIndex: 1, message: "scriptedModel 'scripted': model call #1 (0-based) is beyond a script of 1 entries" },
    ]);
    expect(model.calls).toBe(2);
    expect(model.requests.map((r) => r.messages)).toEqual([
      [{ role: 'user', content: 'hi' }],
      [{ role: 'user', content: 'again' }],
    ]);
  });

  it('asks a script function with the request and call index; undefined is an overrun', async () => {
    const seen: Array<[string, number]> = [];
    const model = scriptedModel((req, callIndex) => {
      seen.push([(req.messages[0] as Extract<Message, { role: 'user' }>).content, callIndex]);
      return callIndex < 1 ? { text: `reply ${callIndex}` } : undefined;
    });
    const signal = new AbortController().signal;
    expect((await collect(model.stream(request('x'), { signal }))).slice(1, 2)).toEqual([
      { type: 'textDelta', delta: 'rep' },
    ]);
    await expect(collect(model.stream(request('y'), { signal }))).rejects.toThrow(
      "scriptedModel 'scripted': the script function returned no entry for model call #1 (0-based)",
    );
    expect(seen).toEqual([
      ['x', 0],
      ['y', 1],
    ]);
    expect(model.overruns.map((o) => o.callIndex)).toEqual([1]);
  });

  it('surfaces a throwing script function from the iterator', async () => {
    const model = scriptedModel(() => {
      throw new Error('boom');
    });
    await expect(collect(model.stream(request(), { signal: new AbortController().signal }))).rejects.toThrow(
      "scriptedModel 'scripted': the script function threw on call #0",
    );
    expect(model.overruns).toEqual([]);
  });

  it('records nothing when recordRequests is false', async () => {
    const model = scriptedModel([{ text: 'a' }], { recordRequests: false });
    await collect(model.stream(request(), { signal: new AbortController().signal }));
    expect(model.requests).toEqual([]);
    expect(model.calls).toBe(1);
  });
});

describe('scriptedModel timing and abort', () => {
  it('waits delayMs on the given clock before the first delta', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel([{ text: 'late', delayMs: 500 }], { clock });
    const events: ModelStreamEvent[] = [];
    const done = (async () => {
      for await (const event of model.stream(request(), { signal: new AbortController().signal })) events.push(event);
    })();
    await settle();
    expect(events).toEqual([{ type: 'start', model: 'scripted' }]);
    clock.increment(499);
    await settle();
    expect(events).toHaveLength(1);
    clock.increment(1);
    await done;
    expect(events.map((event) => event.type)).toEqual(['start', 'textDelta', 'textDelta', 'done']);
  });

  it('ends with an aborted error when aborted during the delay', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel([{ text: 'never', delayMs: 10_000 }], { clock });
    const controller = new AbortController();
    const result = collect(model.stream(request(), { signal: controller.signal }));
    await settle();
    controller.abort();
    expect(await result).toEqual([{ type: 'start', model: 'scripted' }, aborted]);
  });

  it('holds a stalled stream open until the signal aborts', async () => {
    const model = scriptedModel([{ text: 'ab', stall: true }]);
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    const done = (async () => {
      for await (const event of model.stream(request(), { signal: controller.signal })) events.push(event);
    })();
    await settle();
    await settle();
    expect(events).toEqual([
      { type: 'start', model: 'scripted' },
      { type: 'textDelta', delta: 'a' },
      { type: 'textDelta', delta: 'b' },
    ]);
    controller.abort();
    await done;
    expect(events.at(-1)).toEqual(aborted);
    expect(events).toHaveLength(4);
  });

  it('ends promptly with an aborted error when aborted mid-stream', async () => {
    const model = scriptedModel([{ text: 'abcdef', toolCalls: [{ name: 't' }] }]);
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    for await (const event of model.stream(request(), { signal: controller.signal })) {
      events.push(event);
      if (event.type === 'textDelta') controller.abort();
    }
    expect(events).toEqual([{ type: 'start', model: 'scripted' }, { type: 'textDelta', delta: 'ab' }, aborted]);
  });

  it('emits only the aborted error when the signal is already aborted', async () => {
    const model = scriptedModel([{ text: 'x', delayMs: 5 }]);
    const controller = new AbortController();
    controller.abort();
    expect(await collect(model.stream(request(), { signal: controller.signal }))).toEqual([aborted]);
    expect(model.calls).toBe(1);
  });

  it('streams without timers when there is no delay', async () => {
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const clock = {
      setTimeout: () => {
        throw new Error('no timer expected');
      },
      clearTimeout: () => {},
    };
    const model = scriptedModel(() => ({ text: 'quick', toolCalls: [{ name: 't', arguments: { a: 1 } }] }), {
      clock,
      recordRequests: false,
    });
    const signal = new AbortController().signal;
    let count = 0;
    try {
      for (let i = 0; i < 200; i++) {
        for await (const event of model.stream(request(), { signal })) if (event.type !== 'error') count++;
      }
      expect(timers).not.toHaveBeenCalled();
    } finally {
      timers.mockRestore();
    }
    expect(count).toBe(200 * 10);
  });
});
