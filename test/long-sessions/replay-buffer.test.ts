import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentError, createAgent, defineTool, memoryStore, type AgentEvent } from 'agentchart';
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
