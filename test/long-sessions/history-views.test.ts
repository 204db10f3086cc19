import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type AgentEvent, type Message } from 'agentchart';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { finished, ofType } from '../support/harness.js';

const echo = defineTool({
  name: 'echo',
  description: 'Echoes',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});
const toolTurn = (i: number) => ({
  text: `turn ${i}`,
  toolCalls: [{ id: `c${i}`, name: 'echo', arguments: { text: `r${i}` } }],
});

/** A plain copy of an event, built the way events were before views: every field a data property. */
const plain = (event: AgentEvent): Record<string, unknown> =>
  Object.fromEntries(Object.keys(event).map((key) => [key, (event as Record<string, unknown>)[key]]));

describe('events share the history instead of copying it', () => {
  it('beforeModelCall.messages is the exact context sent, frozen, with the same shape for JSON, spreading and iteration', async () => {
    const model = scriptedModel([toolTurn(0), toolTurn(1), { text: 'done' }]);
    const agent = createAgent({ model, tools: [echo] });
    const { result, events } = await finished(agent.prompt('go'));
    const calls = ofType(events, 'beforeModelCall');
    expect(calls.map((e) => e.messages.length)).toEqual([1, 3, 5]);
    calls.forEach((event, i) => {
      expect(event.messages).toEqual(model.requests[i]?.messages);
      expect(Object.isFrozen(event.messages)).toBe(true);
      // The same object while it is held: a consumer comparing or caching it sees one array.
      expect(event.messages).toBe(event.messages);
      expect(Object.keys(event)).toEqual(['type', 'turnIndex', 'model', 'messages', 'runId', 'seq']);
      expect(JSON.parse(JSON.stringify(event))).toEqual(JSON.parse(JSON.stringify(plain(event))));
      expect({ ...event }.messages).toEqual([...event.messages]);
      expect(structuredClone(event)).toEqual(plain(event));
    });
    // Later turns do not change what an earlier event says was sent.
    expect(calls[0]?.messages).toEqual([{ role: 'user', content: 'go' }]);
    const end = ofType(events, 'agentEnd')[0];
    expect(end?.messages).toEqual(result.messages);
    expect(Object.keys(end ?? {})).toEqual(['type', 'status', 'endReason', 'messages', 'counters', 'runId', 'seq']);
    expect(checkInvariants(events, result.messages).violations).toEqual([]);
  });

  it('a context transform: the event shows the transformed context (a shared prefix plus its own tail)', async () => {
    const note: Message = { role: 'user', content: 'note: be brief' };
    const model = scriptedModel([toolTurn(0), { text: 'done' }]);
    const agent = createAgent({ model, tools: [echo], context: { transform: (messages) => [...messages, note] } });
    const { events } = await finished(agent.prompt('go'));
    const calls = ofType(events, 'beforeModelCall');
    expect(calls.map((e) => e.messages.at(-1))).toEqual([note, note]);
    expect(calls[1]?.messages).toEqual(model.requests[1]?.messages);
    expect(agent.messages.includes(note)).toBe(false);
  });

  it('a post-turn replacement and a report-mode discard leave earlier events as they were sent', async () => {
    const replaced = {
      role: 'assistant' as const,
      content: [{ type: 'text' as const, text: 'REPLACED' }],
      stopReason: 'stop' as const,
    };
    const model = scriptedModel([{ text: 'original' }, { text: 'second' }]);
    const agent = createAgent({
      model,
      policies: {
        postTurn: [
          ({ turnIndex }) => (turnIndex === 0 ? { verdict: 'replace', assistant: replaced } : { verdict: 'continue' }),
        ],
      },
    });
    const first = await finished(agent.prompt('one'));
    expect(first.result.messages.at(-1)).toEqual(replaced);
    const second = await finished(agent.prompt('two'));
    expect(ofType(second.events, 'beforeModelCall')[0]?.messages).toEqual([
      { role: 'user', content: 'one' },
      replaced,
      { role: 'user', content: 'two' },
    ]);
    expect(ofType(first.events, 'agentEnd')[0]?.messages).toEqual([{ role: 'user', content: 'one' }, replaced]);
  });

  it('the store writes a reference for the shared prefix and loads the full messages back', async () => {
    const store = memoryStore();
    const writes: string[] = [];
    const recording = {
      ...store,
      commitStepSync: undefined,
      commitStep: async (id: string, step: Parameters<typeof store.commitStep>[1]) => {
        writes.push(
          ...step.events
            .filter((e) => e.type === 'beforeModelCall' || e.type === 'agentEnd')
            .map((e) => JSON.stringify(e)),
        );
        return store.commitStep(id, step);
      },
    };
    const agent = createAgent({
      model: scriptedModel([toolTurn(0), toolTurn(1), toolTurn(2), { text: 'done' }]),
      tools: [echo],
      store: recording,
      sessionId: 's',
    });
    await agent.ready;
    const { events } = await finished(agent.prompt('go'));
    await agent.flush();
    expect(writes).toHaveLength(5);
    for (const json of writes)
      expect(JSON.parse(json).messages).toEqual({ historyPrefix: expect.any(Number), tail: [] });
    const stored = await store.loadEvents('s');
    expect(stored).toEqual(events.map(plain));
  });
});
