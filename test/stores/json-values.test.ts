import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AgentError,
  createAgent,
  defineTool,
  memoryStore,
  type AgentEvent,
  type Message,
  type PostTurnVerdict,
  type SessionStore,
} from 'agentchart';
import { postgresStore } from 'agentchart/postgres';
import { sqliteStore } from 'agentchart/sqlite';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { startPostgres } from '../support/postgres.js';

/**
 * Values JSON cannot hold, handed over by a tool while it runs: refused where they are handed over,
 * the same with or without a store, and the run goes on. A store used to fail the whole run
 * (`storeFailed`: "Do not know how to serialize a BigInt") on one progress update.
 */

const started = await startPostgres();
const postgres = 'server' in started ? started.server : null;
if (!postgres) console.log(`postgres cases skipped: ${'skipped' in started ? started.skipped : ''}`);
afterAll(() => postgres?.stop());

interface Setup {
  store: SessionStore | null;
  close(): Promise<void>;
}

const setups: Array<[string, () => Promise<Setup>]> = [
  ['no store', async () => ({ store: null, close: async () => {} })],
  ['memoryStore', async () => ({ store: memoryStore(), close: async () => {} })],
  [
    'sqliteStore (a file)',
    async () => {
      const store = sqliteStore(join(mkdtempSync(join(tmpdir(), 'agentchart-json-')), 's.db'));
      return { store, close: async () => store.close() };
    },
  ],
];
if (postgres) {
  setups.push([
    'postgresStore',
    async () => {
      const store = postgresStore({ connectionString: postgres.connectionString });
      return { store, close: () => store.close() };
    },
  ]);
}

/** Cases share the PostgreSQL database: each session is new. */
let sessions = 0;
const newSessionId = () => `json-${process.pid}-${sessions++}`;

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

const updatesOf = (events: readonly AgentEvent[]) =>
  events
    .filter((event) => event.type === 'toolExecutionUpdate')
    .map((event) => [event.toolCallId, event.partial] as const);

describe.each(setups)('ctx.update with a value JSON cannot hold (%s)', (_name, setup) => {
  it('is refused at the call (InvalidInput naming the path), nothing is published or stored, the run goes on', async () => {
    refusals.length = 0;
    const { store, close } = await setup();
    const sessionId = newSessionId();
    const agent = createAgent({
      model: script(),
      tools: [fetchTool, countTool, fireTool],
      ...(store ? { store, sessionId } : {}),
    });
    await agent.ready;
    const run = agent.prompt('go');
    const events: AgentEvent[] = [];
    run.events.subscribe((event) => events.push(event));
    const result = await run.result;

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
    expect(checkInvariants(events, result.messages)).toEqual({ ok: true, violations: [] });

    if (store) {
      // What subscribers saw is what the store holds, and the session loads and runs again.
      const stored = await store.loadEvents(sessionId);
      expect(stored.map((event) => [event.seq, event.type])).toEqual(events.map((event) => [event.seq, event.type]));
      expect(updatesOf(stored)).toEqual(updatesOf(events));
      await agent.close();
      const again = createAgent({ model: script(), tools: [fetchTool, countTool, fireTool], store, sessionId });
      await again.ready;
      expect(again.messages).toEqual(result.messages);
      expect(again.counters).toEqual(result.counters);
      await again.close();
    }
    await close();
  });
});

describe.each(setups)('a progress object the tool changes after sending it (%s)', (_name, setup) => {
  it('each update is kept as it was sent: live, replayed to a late subscriber, and stored', async () => {
    const { store, close } = await setup();
    const sessionId = newSessionId();
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
    const agent = createAgent({ model, tools: [tick], ...(store ? { store, sessionId } : {}) });
    await agent.ready;
    const run = agent.prompt('go');
    const live: AgentEvent[] = [];
    run.events.subscribe((event) => live.push(event));
    await run.result;
    const late: AgentEvent[] = [];
    run.events.subscribe((event) => late.push(event));
    const sent = [
      ['t1', { done: 1, files: ['f1'] }],
      ['t1', { done: 2, files: ['f1', 'f2'] }],
      ['t1', { done: 3, files: ['f1', 'f2', 'f3'] }],
    ];
    expect(updatesOf(live)).toEqual(sent);
    expect(updatesOf(late)).toEqual(sent);
    if (store) expect(updatesOf(await store.loadEvents(sessionId))).toEqual(sent);
    await agent.close();
    await close();
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

/** A tool whose schema turns the model's JSON into what JSON cannot hold, and echoes what it got. */
const ledger = defineTool({
  name: 'ledger',
  description: 'Books an amount.',
  parameters: z.object({
    amount: z.string().transform((text) => BigInt(text)),
    at: z.string().transform((text) => new Date(text)),
    note: z.unknown().optional(),
  }),
  execute: ({ amount, at, note }) =>
    `booked ${typeof amount} ${String(amount)} at ${at instanceof Date ? at.toISOString() : typeof at} note ${typeof note}`,
});
const ledgerCall = (id: string) => ({ id, name: 'ledger', arguments: { amount: '5', at: '2026-01-02T00:00:00.000Z' } });
const twoTurns = (id: string) => scriptedModel([{ toolCalls: [ledgerCall(id)] }, { text: 'done' }]);
const resultsOf = (messages: readonly Message[]) =>
  messages.flatMap((message) => (message.role === 'toolResult' ? [message.content] : []));

describe.each(setups)('other values a tool or a caller hands over (%s)', (_name, setup) => {
  async function runWith(
    options: Omit<Parameters<typeof createAgent>[0], 'model'>,
    model: ReturnType<typeof scriptedModel>,
  ) {
    const { store, close } = await setup();
    const sessionId = newSessionId();
    const agent = createAgent({ model, ...options, ...(store ? { store, sessionId } : {}) });
    await agent.ready;
    const run = agent.prompt('go');
    const events: AgentEvent[] = [];
    run.events.subscribe((event) => events.push(event));
    const result = await run.result;
    expect(checkInvariants(events, result.messages)).toEqual({ ok: true, violations: [] });
    const stored = store ? await store.loadEvents(sessionId) : null;
    await agent.close();
    await close();
    return { result, events, stored };
  }

  it("a schema's output JSON cannot hold (a BigInt, a Date) runs the tool as it is and is published as a trace writes it", async () => {
    const { result, events, stored } = await runWith({ tools: [ledger] }, twoTurns('l1'));
    expect(result).toMatchObject({
      status: 'completed',
      endReason: 'naturalEnd',
      counters: { toolCallsExecuted: 1, toolCallsFailed: 0 },
    });
    expect(resultsOf(result.messages)).toEqual(['booked bigint 5 at 2026-01-02T00:00:00.000Z note undefined']);
    const published = { amount: '5n', at: '2026-01-02T00:00:00.000Z' };
    expect(events.find((event) => event.type === 'toolExecutionStart')).toMatchObject({ arguments: published });
    if (stored)
      expect(stored.find((event) => event.type === 'toolExecutionStart')).toMatchObject({ arguments: published });
  });

  it('approved arguments JSON cannot hold, from an approval handler, are a denial naming the place', async () => {
    const { result, events } = await runWith(
      {
        tools: [ledger],
        approvalMode: 'always',
        approval: () => ({ approved: true, arguments: { amount: '7', at: '2026-01-02', note: 7n } }),
      },
      twoTurns('l2'),
    );
    const why =
      'the approval handler returned an invalid decision: the approval decision holds what JSON cannot: decision.arguments.note is a BigInt';
    expect(resultsOf(result.messages)).toEqual([expect.stringContaining(why)]);
    expect(events.filter((event) => event.type === 'policyError')).toEqual([
      expect.objectContaining({ slot: 'approval', message: expect.stringContaining(why) }),
    ]);
    expect(result).toMatchObject({
      status: 'completed',
      counters: { approvalsRequested: 1, approvalsDenied: 1, toolCallsExecuted: 0, failureCodes: {} },
    });
  });

  it('rewritten arguments JSON cannot hold, from a pre-dispatch policy, are a policyError and the call runs as the model sent it', async () => {
    const { result, events } = await runWith(
      {
        tools: [ledger],
        policies: {
          preDispatch: [() => ({ verdict: 'continue', arguments: { amount: '8', at: 'x', note: () => 1 } })],
        },
      },
      twoTurns('l3'),
    );
    expect(events.filter((event) => event.type === 'policyError')).toEqual([
      expect.objectContaining({
        slot: 'preDispatch',
        message: expect.stringContaining('the verdict holds what JSON cannot: verdict.arguments.note is a function'),
      }),
    ]);
    expect(resultsOf(result.messages)).toEqual(['booked bigint 5 at 2026-01-02T00:00:00.000Z note undefined']);
    expect(result).toMatchObject({ status: 'completed', counters: { toolCallsExecuted: 1 } });
  });

  it('a post-turn replacement whose tool calls hold what JSON cannot is a policyError, never an internal failure', async () => {
    const { result, events } = await runWith(
      {
        tools: [ledger],
        policies: {
          postTurn: [
            ({ assistant }): PostTurnVerdict =>
              assistant?.content.some((block) => block.type === 'toolCall')
                ? {
                    verdict: 'replace',
                    assistant: {
                      ...assistant,
                      content: assistant.content.map((block) =>
                        block.type === 'toolCall' ? { ...block, arguments: { ...block.arguments, extra: 1n } } : block,
                      ),
                    },
                  }
                : { verdict: 'continue' },
          ],
        },
      },
      twoTurns('l4'),
    );
    expect(events.filter((event) => event.type === 'policyError')).toEqual([
      expect.objectContaining({
        slot: 'postTurn',
        message: expect.stringMatching(/verdict\.assistant\.content\[0\]\.arguments\.extra is a BigInt/),
      }),
    ]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd', counters: { toolCallsExecuted: 1 } });
    expect(result.messages[1]).toMatchObject({
      content: [{ type: 'toolCall', arguments: ledgerCall('l4').arguments }],
    });
  });

  it("a tool's question whose schema JSON cannot hold is declined, saying why, and nothing is published", async () => {
    const asks = defineTool({
      name: 'asks',
      description: 'Asks the user.',
      parameters: z.object({}),
      execute: async (_args, ctx) =>
        JSON.stringify(await ctx.elicit?.({ message: 'How many?', requestedSchema: { type: 'object', maximum: 10n } })),
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'q1', name: 'asks', arguments: {} }] }, { text: 'done' }]);
    const { result, events } = await runWith(
      { tools: [asks], approval: () => ({ approved: true, arguments: { n: 1 } }) },
      model,
    );
    expect(resultsOf(result.messages)).toEqual([
      JSON.stringify({
        action: 'decline',
        reason: 'the question was not asked: requestedSchema.maximum is a BigInt, which JSON cannot hold',
      }),
    ]);
    expect(events.some((event) => event.type.startsWith('elicitation'))).toBe(false);
    expect(result).toMatchObject({ status: 'completed', counters: { toolCallsExecuted: 1, toolCallsFailed: 0 } });
  });
});
