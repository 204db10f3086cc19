import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentError, createAgent, defineTool, memoryStore, type AgentEvent, type Model } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { ofType } from '../support/harness.js';

const ticker = defineTool({
  name: 'ticker',
  description: 'Reports progress',
  parameters: z.object({ updates: z.number() }),
  execute: async ({ updates }, ctx) => {
    for (let i = 0; i < updates; i++) await ctx.update(i);
    return `sent ${updates}`;
  },
});

const tickerModel = (updates: number) =>
  scriptedModel([{ toolCalls: [{ id: 't', name: 'ticker', arguments: { updates } }] }, { text: 'done' }]);

describe('run.events replays a bounded buffer (replayBuffer)', () => {
  it('a late subscriber gets the last `replayBuffer` events, then nothing is lost live', async () => {
    const live: AgentEvent[] = [];
    const agent = createAgent({ model: tickerModel(300), tools: [ticker], replayBuffer: 100 });
    const run = agent.prompt('go');
    run.events.subscribe((event) => live.push(event));
    await run.result;
    const late: AgentEvent[] = [];
    run.events.subscribe({ next: (event) => late.push(event) });
    expect(late).toEqual(live.slice(-100));
    expect(ofType(live, 'toolExecutionUpdate')).toHaveLength(300);
  });

  it('replayBuffer 0 replays nothing; the default keeps 5,000; a bad value is InvalidOptions', async () => {
    const none = createAgent({ model: tickerModel(10), tools: [ticker], replayBuffer: 0 });
    const run = none.prompt('go');
    await run.result;
    const late: AgentEvent[] = [];
    run.events.subscribe((event) => late.push(event));
    expect(late).toEqual([]);

    const byDefault = createAgent({ model: tickerModel(6_000), tools: [ticker] });
    const long = byDefault.prompt('go');
    await long.result;
    const replayed: AgentEvent[] = [];
    long.events.subscribe((event) => replayed.push(event));
    expect(replayed).toHaveLength(5_000);
    expect(replayed.at(-1)?.type).toBe('agentEnd');

    for (const replayBuffer of [-1, 1.5, Number.NaN]) {
      expect(() => createAgent({ model: tickerModel(1), replayBuffer })).toThrow(AgentError);
    }
  });

  it('a progress-heavy tool is written to the store as it goes: bounded buffers, every update stored', async () => {
    const store = memoryStore();
    let steps = 0;
    let largest = 0;
    const counting = {
      ...store,
      commitStepSync: (id: string, step: Parameters<typeof store.commitStepSync>[1]) => {
        steps++;
        largest = Math.max(largest, step.events.length);
        store.commitStepSync(id, step);
      },
    };
    const agent = createAgent({
      model: tickerModel(5_000),
      tools: [ticker],
      store: counting,
      sessionId: 's',
      replayBuffer: 0,
    });
    await agent.ready;
    const result = await agent.prompt('go').result;
    expect(result.status).toBe('completed');
    expect(largest).toBeLessThanOrEqual(256);
    expect(steps).toBeGreaterThan(5_000 / 256);
    const stored = await store.loadEvents('s');
    expect(ofType(stored, 'toolExecutionUpdate').map((e) => e.partial)).toEqual(
      Array.from({ length: 5_000 }, (_, i) => i),
    );
  });
});

/** A reply of thinking, text and tool-call pieces, one tool call first opened by a stray fragment. */
function piecesModel(): Model {
  let calls = 0;
  return {
    name: 'pieces',
    async *stream() {
      if (calls++ > 0) {
        yield* (['Al', 'l ', 'done.'] as const).map((delta) => ({ type: 'textDelta' as const, delta }));
        yield { type: 'done' as const, stopReason: 'stop' as const };
        return;
      }
      yield { type: 'start' as const };
      for (const delta of ['Let', ' me', ' look.']) yield { type: 'thinkingDelta' as const, delta };
      for (const delta of ['Checking', '', ' both.']) yield { type: 'textDelta' as const, delta };
      yield { type: 'toolCallStart' as const, index: 0, id: 'a', name: 'echo' };
      for (const argumentsDelta of ['{"te', 'xt":', '"x"}'])
        yield { type: 'toolCallDelta' as const, index: 0, argumentsDelta };
      yield { type: 'toolCallEnd' as const, index: 0 };
      // A fragment before its start: the call is named by the start that follows.
      yield { type: 'toolCallDelta' as const, index: 1, argumentsDelta: '{"text"' };
      yield { type: 'toolCallStart' as const, index: 1, id: 'b', name: 'echo' };
      yield { type: 'toolCallDelta' as const, index: 1, argumentsDelta: ':"y"}' };
      yield { type: 'toolCallEnd' as const, index: 1 };
      yield { type: 'done' as const, stopReason: 'toolUse' as const };
    },
  };
}

const echo = defineTool({
  name: 'echo',
  description: 'Echoes',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});

describe('a late subscriber gets the messageUpdates as published (kept packed in the buffer)', () => {
  for (const streaming of ['live', 'buffered'] as const) {
    it(`streaming '${streaming}': every event replayed equals the one published, field for field and key order`, async () => {
      const agent = createAgent({ model: piecesModel(), tools: [echo], streaming });
      const run = agent.prompt('go');
      const live: AgentEvent[] = [];
      run.events.subscribe((event) => live.push(event));
      await run.result;
      const late: AgentEvent[] = [];
      run.events.subscribe((event) => late.push(event));
      expect(ofType(live, 'messageUpdate').length).toBeGreaterThanOrEqual(12);
      expect(JSON.stringify(late)).toBe(JSON.stringify(live));
      expect(late).toEqual(live);
    });
  }

  it('a buffer that drops the oldest updates mid-message replays exactly the last `replayBuffer` events', async () => {
    const all: AgentEvent[] = [];
    const full = createAgent({ model: piecesModel(), tools: [echo], streaming: 'live' }).prompt('go');
    full.events.subscribe((event) => all.push(event));
    await full.result;
    for (let replayBuffer = 1; replayBuffer <= all.length + 1; replayBuffer++) {
      const run = createAgent({ model: piecesModel(), tools: [echo], streaming: 'live', replayBuffer }).prompt('go');
      const live: AgentEvent[] = [];
      run.events.subscribe((event) => live.push(event));
      await run.result;
      const late: AgentEvent[] = [];
      run.events.subscribe((event) => late.push(event));
      expect(JSON.stringify(late), `replayBuffer ${replayBuffer}`).toBe(JSON.stringify(live.slice(-replayBuffer)));
    }
  });

  it('a message of thousands of deltas past the buffer keeps only the last `replayBuffer` of them', async () => {
    const deltas = Array.from({ length: 3_000 }, (_, i) => `d${i} `);
    const model: Model = {
      name: 'long',
      async *stream() {
        for (const [i, delta] of deltas.entries()) {
          // Now and then a macrotask: the test subscribes while the message streams.
          if (i % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
          yield { type: 'textDelta' as const, delta };
        }
        yield { type: 'done' as const, stopReason: 'stop' as const };
      },
    };
    const run = createAgent({ model, streaming: 'live', replayBuffer: 500 }).prompt('go');
    const live: AgentEvent[] = [];
    run.events.subscribe((event) => live.push(event));
    const late: AgentEvent[] = [];
    // Subscribed while the message streams: the last 500 so far, then the rest live.
    while (ofType(live, 'messageUpdate').length < 1_000) await new Promise((resolve) => setImmediate(resolve));
    const seenBefore = live.length;
    expect(live.at(-1)?.type).toBe('messageUpdate');
    run.events.subscribe((event) => late.push(event));
    await run.result;
    expect(late.slice(0, 500)).toEqual(live.slice(seenBefore - 500, seenBefore));
    expect(late.slice(500)).toEqual(live.slice(seenBefore));
    expect(ofType(live, 'messageUpdate').map((event) => (event.delta as { text: string }).text)).toEqual(deltas);
  });
});
