import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type SessionStore } from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { checkInvariants, scriptedModel } from 'agentchart/testing';

/**
 * Agents are handles on a stored session: two of them in one process take turns running it. Each
 * reloads what the other wrote before its own run (never writing over it, never answering
 * StaleVersion), and the counters of the session add up across both.
 */

const note = defineTool({
  name: 'note',
  description: 'Notes a line.',
  parameters: z.object({ line: z.string() }),
  execute: ({ line }) => `noted ${line}`,
});

/** Each prompt: one tool call named after the prompt, then an answer that quotes how many prompts the model saw. */
const model = () =>
  scriptedModel(
    (request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'user')
        return { toolCalls: [{ id: `n-${last.content}`, name: 'note', arguments: { line: last.content } }] };
      const prompts = request.messages.filter((m) => m.role === 'user').map((m) => m.role === 'user' && m.content);
      return { text: `seen: ${prompts.join(', ')}` };
    },
    { recordRequests: false },
  );

const stores: Array<[string, () => SessionStore]> = [
  ['memoryStore', () => memoryStore()],
  ['sqliteStore', () => sqliteStore(join(mkdtempSync(join(tmpdir(), 'agentchart-handles-')), 's.db'))],
];

describe.each(stores)('two agents on one session (%s)', (_name, open) => {
  it('A runs, B runs, A runs: each run sees the other’s messages, nothing is overwritten, counters add up', async () => {
    const store = open();
    const a = createAgent({ model: model(), tools: [note], store, sessionId: 'shared' });
    const b = createAgent({ model: model(), tools: [note], store, sessionId: 'shared' });
    await Promise.all([a.ready, b.ready]);

    const first = await a.prompt('one').result;
    const second = await b.prompt('two').result;
    const third = await a.prompt('three').result;
    for (const result of [first, second, third]) expect(result.status).toBe('completed');
    // Each run's model saw every prompt before it, whichever agent wrote it.
    expect(second.messages.at(-1)).toMatchObject({ content: [{ type: 'text', text: 'seen: one, two' }] });
    expect(third.messages.at(-1)).toMatchObject({ content: [{ type: 'text', text: 'seen: one, two, three' }] });

    const stored = await store.load('shared');
    expect(stored?.history.filter((m) => m.role === 'user').map((m) => m.role === 'user' && m.content)).toEqual([
      'one',
      'two',
      'three',
    ]);
    expect(stored?.history).toEqual(a.messages);
    // Three runs of two turns, counted once each, whichever agent ran them.
    expect(stored?.counters).toMatchObject({ turns: 6, modelCalls: 6, toolCallsExecuted: 3 });
    expect(a.counters).toEqual(stored?.counters);
    const events = await store.loadEvents('shared');
    expect(checkInvariants(events, stored?.history).violations).toEqual([]);
    expect(new Set(events.map((e) => e.runId)).size).toBe(3);
    // The turn index went on across the agents.
    expect(events.filter((e) => e.type === 'turnStart').map((e) => e.turnIndex)).toEqual([0, 1, 2, 3, 4, 5]);
    // B learns of A's last run when it next runs; until then its snapshot is what it last saw.
    expect(b.snapshot().turnIndex).toBe(4);
    await b.prompt('four').result;
    expect(b.snapshot()).toMatchObject({ turnIndex: 8, running: false });
    expect(b.counters.turns).toBe(8);
  });
});
