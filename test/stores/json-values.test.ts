import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentError, createAgent, defineTool } from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';
import { runOn, setups, updatesOf } from './json-setups.js';

/**
 * A tool's progress update JSON cannot hold is refused at `ctx.update`, the same with or without a
 * store, and the run goes on. A store used to fail the whole run (`storeFailed`: "Do not know how to
 * serialize a BigInt") on one progress update.
 */

const cyclic: Record<string, unknown> = { name: 'loop' };
cyclic.self = cyclic;

const refusals: unknown[] = [];

const fetchTool = defineTool({
  name: 'fetch',
  description: 'Fetches; reports a BigInt once and catches the refusal.',
  parameters: z.object({}),
  execute: async (_args, ctx) => {
    await ctx.update({ done: 1 });
    refusals.push(
      await ctx.update({ bytes: 10n }).then(
        () => null,
        (error: unknown) => error,
      ),
    );
    await ctx.update({ done: 2 });
    return 'fetched';
  },
});
const countTool = defineTool({
  name: 'count',
  description: 'Reports a cycle and does not catch the refusal.',
  parameters: z.object({}),
  execute: async (_args, ctx) => {
    await ctx.update(cyclic);
    return 'never reached';
  },
});
const fireTool = defineTool({
  name: 'fire',
  description: 'Reports a function without awaiting the update: no unhandled rejection may come of it.',
  parameters: z.object({}),
  execute: (_args, ctx) => {
    void ctx.update({ callback: () => 1 });
    void ctx.update(undefined);
    return 'fired';
  },
});

const script = () =>
  scriptedModel([
    {
      toolCalls: [
        { id: 'c1', name: 'fetch', arguments: {} },
        { id: 'c2', name: 'count', arguments: {} },
        { id: 'c3', name: 'fire', arguments: {} },
      ],
    },
    { text: 'done' },
  ]);

describe.each(setups)('ctx.update with a value JSON cannot hold (%s)', (_name, setup) => {
  it('is refused at the call (InvalidInput naming the path), nothing is published or stored, the run goes on', async () => {
    refusals.length = 0;
    const tools = [fetchTool, countTool, fireTool];
    const { result, events, stored } = await runOn(setup, script(), { tools }, async (store, sessionId, ran) => {
      // The session loads again as it was.
      const again = createAgent({ model: script(), tools, store, sessionId });
      await again.ready;
      expect(again.messages).toEqual(ran.result.messages);
      expect(again.counters).toEqual(ran.result.counters);
      await again.close();
    });

    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(result.error).toBeUndefined();
    expect(refusals).toEqual([
      expect.objectContaining({
        name: 'AgentError',
        code: 'InvalidInput',
        message:
          'ctx.update (tool "fetch"): partial.bytes is a BigInt; an update must be a JSON value, and this one was not published',
      }),
    ]);
    expect(refusals[0]).toBeInstanceOf(AgentError);
    const results = result.messages.filter((message) => message.role === 'toolResult');
    expect(results.map(({ toolCallId, content, isError }) => ({ toolCallId, content, isError }))).toEqual([
      { toolCallId: 'c1', content: 'fetched', isError: false },
      {
        toolCallId: 'c2',
        content:
          'ctx.update (tool "count"): partial.self refers back to itself (a cycle); an update must be a JSON value, and this one was not published',
        isError: true,
      },
      { toolCallId: 'c3', content: 'fired', isError: false },
    ]);
    // Only the updates JSON holds were published (undefined is none: a store would drop the field).
    expect(updatesOf(events)).toEqual([
      ['c1', { done: 1 }],
      ['c1', { done: 2 }],
    ]);
    expect(result.counters).toMatchObject({
      turns: 2,
      toolCallsRequested: 3,
      toolCallsExecuted: 3,
      toolCallsFailed: 1,
      toolCallsInvalid: 0,
      failureCodes: {},
    });
    if (stored) {
      // What subscribers saw is what the store holds.
      expect(stored.map((event) => [event.seq, event.type])).toEqual(events.map((event) => [event.seq, event.type]));
      expect(updatesOf(stored)).toEqual(updatesOf(events));
    }
  });
});

describe.each(setups)('a progress object the tool changes after sending it (%s)', (_name, setup) => {
  it('each update is kept as it was sent: live, replayed to a late subscriber, and stored', async () => {
    const tick = defineTool({
      name: 'tick',
      description: 'Reuses one progress object.',
      parameters: z.object({}),
      execute: async (_args, ctx) => {
        const progress = { done: 0, files: [] as string[] };
        for (let i = 1; i <= 3; i++) {
          progress.done = i;
          progress.files.push(`f${i}`);
          await ctx.update(progress);
        }
        progress.done = 99;
        return 'ticked';
      },
    });
    const model = scriptedModel([{ toolCalls: [{ id: 't1', name: 'tick', arguments: {} }] }, { text: 'ok' }]);
    const { events, late, stored } = await runOn(setup, model, { tools: [tick] });
    const sent = [
      ['t1', { done: 1, files: ['f1'] }],
      ['t1', { done: 2, files: ['f1', 'f2'] }],
      ['t1', { done: 3, files: ['f1', 'f2', 'f3'] }],
    ];
    expect(updatesOf(events)).toEqual(sent);
    expect(updatesOf(late)).toEqual(sent);
    if (stored) expect(updatesOf(stored)).toEqual(sent);
  });
});

describe('a progress update stored without its value', () => {
  it('(written by an earlier version for ctx.update(undefined)) loads again, read as undefined', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'agentchart-json-')), 's.db');
    const store = sqliteStore(file);
    const ping = defineTool({
      name: 'ping',
      description: 'Reports progress.',
      parameters: z.object({}),
      execute: async (_args, ctx) => {
        await ctx.update({ beat: 1 });
        return 'pong';
      },
    });
    const call = { toolCalls: [{ id: 'p1', name: 'ping', arguments: {} }] };
    const agent = createAgent({ model: scriptedModel([call, { text: 'ok' }]), tools: [ping], store, sessionId: 's' });
    await agent.ready;
    await agent.prompt('go').result;
    await agent.close();
    store.close();
    // JSON drops a field whose value is undefined: that is how such an update was stored.
    const db = new DatabaseSync(file);
    const changed = db
      .prepare(
        `UPDATE events SET event = json_remove(event, '$.partial') WHERE json_extract(event, '$.type') = 'toolExecutionUpdate'`,
      )
      .run();
    db.close();
    expect(changed.changes).toBe(1);

    const reopened = sqliteStore(file);
    const events = await reopened.loadEvents('s');
    expect(updatesOf(events)).toEqual([['p1', undefined]]);
    const again = createAgent({
      model: scriptedModel([{ text: 'still here' }]),
      tools: [ping],
      store: reopened,
      sessionId: 's',
    });
    await again.ready;
    expect((await again.prompt('and now?').result).status).toBe('completed');
    await again.close();
    reopened.close();
  });
});
