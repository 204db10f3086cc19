import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type SessionStore } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { deferred } from '../support/harness.js';

/**
 * `ctx.idempotencyKey` identifies one call for the session's whole life: calls a provider gave the
 * same id in different turns or runs get different keys, and a call resumed after a crash keeps its key.
 */

const TTL = 3_000;
const macrotasks = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('idempotency keys', () => {
  it('a provider reusing call ids across turns and runs: every call gets its own key', async () => {
    const keys: string[] = [];
    const charge = defineTool({
      name: 'charge',
      description: 'Charges a card (dedupes on the key).',
      parameters: z.object({ cents: z.number() }),
      execute: (_args, ctx) => (keys.push(ctx.idempotencyKey), 'charged'),
    });
    // Like the OpenAI adapter naming id-less calls call_<index>: every turn's call is call_0.
    const model = () =>
      scriptedModel(
        (request) =>
          request.messages.at(-1)?.role === 'user'
            ? { toolCalls: [{ id: 'call_0', name: 'charge', arguments: { cents: 100 } }] }
            : { text: 'done' },
        { recordRequests: false },
      );
    const store = memoryStore();
    const first = createAgent({ model: model(), tools: [charge], store, sessionId: 'shop:1' });
    await first.ready;
    await first.prompt('buy one').result;
    await first.prompt('buy another').result;
    // Another handle on the session, a later run.
    const second = createAgent({ model: model(), tools: [charge], store, sessionId: 'shop:1' });
    await second.ready;
    await second.prompt('and one more').result;
    expect(keys).toEqual(['shop\\:1:0:call_0', 'shop\\:1:2:call_0', 'shop\\:1:4:call_0']);
    // Without a store the agent is the session: its keys are unique too, and differ from another agent's.
    const loose = [createAgent({ model: model(), tools: [charge] }), createAgent({ model: model(), tools: [charge] })];
    for (const agent of loose) await agent.prompt('buy').result;
    expect(new Set(keys).size).toBe(5);
  });

  it("a call resumed after its process died keeps its key (a 'safe' tool re-run)", async () => {
    const clock = new SimulatedClock();
    clock.set(1_700_000_000_000);
    const base = memoryStore({ now: () => clock.now() });
    const keys: string[] = [];
    const hold = deferred<void>();
    const fetchPage = defineTool({
      name: 'fetch_page',
      description: 'Fetches a page (safe to run again).',
      parameters: z.object({ url: z.string() }),
      replay: 'safe',
      execute: async (_args, ctx) => {
        keys.push(ctx.idempotencyKey);
        if (keys.length === 1) await hold.promise;
        return 'the page';
      },
    });
    const model = () =>
      scriptedModel([{ toolCalls: [{ id: 'f1', name: 'fetch_page', arguments: { url: 'x' } }] }, { text: 'read it' }]);
    // The first process: from its death on, nothing it does reaches the store.
    let dead = false;
    const gate =
      <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
      (...args: A) =>
        dead ? new Promise<R>(() => {}) : call(...args);
    const dying: SessionStore = {
      ...base,
      commitStepSync: undefined,
      acquireSync: undefined,
      commitStep: gate(base.commitStep),
      renew: gate(base.renew),
      release: gate(base.release),
    };
    const first = createAgent({
      model: model(),
      tools: [fetchPage],
      store: dying,
      sessionId: 's',
      clock,
      lease: { ttlMs: TTL },
    });
    await first.ready;
    void first.prompt('read the page');
    for (let i = 0; i < 20 && keys.length === 0; i++) await macrotasks();
    dead = true;
    clock.increment(TTL + 1);
    const second = createAgent({
      model: scriptedModel([{ text: 'read it' }]),
      tools: [fetchPage],
      store: base,
      sessionId: 's',
      clock,
      lease: { ttlMs: TTL },
    });
    const { resumedRun } = await second.ready;
    expect((await resumedRun?.result)?.status).toBe('completed');
    expect(keys).toEqual(['s:0:f1', 's:0:f1']);
  });
});
