import { describe, expect, it } from 'vitest';
import { createAgent, memoryStore } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';

describe('an idle session round-trips through a store', () => {
  it('history, counters and queued messages come back in a new agent; a queued steering message is delivered by continue()', async () => {
    const store = memoryStore();
    const first = createAgent({
      model: scriptedModel([{ text: 'Hello.', usage: { input: 3, output: 2 } }]),
      store,
      sessionId: 's1',
    });
    await first.ready;
    await first.prompt('hi').result;
    await first.steer('and then?');
    await first.close();
    const model = scriptedModel([{ text: 'Then this.' }]);
    const second = createAgent({ model, store, sessionId: 's1' });
    expect(await second.ready).toEqual({ resumedRun: null });
    expect(second.messages).toEqual(first.messages);
    expect(second.counters).toEqual(first.counters);
    expect(second.snapshot().steeringQueue).toEqual([{ role: 'user', content: 'and then?' }]);
    const result = await second.continue().result;
    expect(result.messages.slice(-2)).toEqual([
      { role: 'user', content: 'and then?' },
      expect.objectContaining({ role: 'assistant' }),
    ]);
    expect(result.counters.steeringDelivered).toBe(1);
    expect(model.requests[0]?.messages.at(-1)).toEqual({ role: 'user', content: 'and then?' });
  });
});
