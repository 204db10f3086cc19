import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type Message, type MessageInput } from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';

/**
 * Refused at the door: what a store cannot hold is refused when it is handed over (a typed
 * InvalidInput, nothing stored), not accepted and then lost at the store.
 */

const custom = (data: unknown) =>
  ({ role: 'custom', customType: 'note', content: 'a note', data }) as unknown as MessageInput;

const cyclic: Record<string, unknown> = { name: 'loop' };
cyclic.self = cyclic;
const shared = { value: 1 };

describe('message data JSON cannot hold', () => {
  const unholdable: Array<[string, unknown, RegExp]> = [
    ['a BigInt', { amount: 10n }, /data\.amount is a BigInt, which JSON cannot hold/],
    ['a function', { callback: () => 1 }, /data\.callback is a function/],
    ['a cycle', cyclic, /data\.self refers back to itself \(a cycle\)/],
    ['a symbol in an array', [1, Symbol('s')], /data\[1\] is a symbol/],
    ['NaN', { ratio: Number.NaN }, /data\.ratio is NaN/],
    ['a Map', { index: new Map() }, /data\.index is a Map \(JSON would change it\)/],
    ['a Date', new Date(0), /data is a Date/],
    ['undefined in an array', [undefined], /data\[0\] is undefined/],
  ];

  it.each(unholdable)(
    '%s: prompt, steer and followUp refuse it (InvalidInput), nothing is stored',
    async (_name, data, why) => {
      const store = sqliteStore(join(mkdtempSync(join(tmpdir(), 'agentchart-door-')), 's.db'));
      const agent = createAgent({ model: scriptedModel([{ text: 'ok' }]), store, sessionId: 's' });
      await agent.ready;
      const refused = expect.objectContaining({
        name: 'AgentError',
        code: 'InvalidInput',
        message: expect.stringMatching(why),
      });
      expect(() => agent.prompt(custom(data))).toThrow(refused);
      expect(() => agent.prompt(['fine', custom(data)])).toThrow(refused);
      expect(() => agent.steer(custom(data))).toThrow(refused);
      expect(() => agent.followUp(custom(data))).toThrow(refused);
      expect(agent.running).toBe(false);
      expect(await store.load('s')).toBeNull();
      store.close();
    },
  );

  it('plain JSON data (nested, shared but not cyclic, undefined properties dropped) is accepted and loads as given', async () => {
    const store = sqliteStore(join(mkdtempSync(join(tmpdir(), 'agentchart-door-')), 's.db'));
    const agent = createAgent({ model: scriptedModel([{ text: 'ok' }]), store, sessionId: 's' });
    await agent.ready;
    const data = { a: shared, b: [shared, null, true, 'x', 1.5], c: { d: undefined } };
    await agent.prompt(custom(data)).result;
    const stored = (await store.load('s'))?.history[0] as Message & { data?: unknown };
    expect(stored.data).toEqual({ a: { value: 1 }, b: [{ value: 1 }, null, true, 'x', 1.5], c: {} });
    store.close();
  });
});

describe('other messages and answers JSON cannot hold', () => {
  it("a tool call's arguments in a handed-over assistant message: prompt, steer and followUp refuse it", async () => {
    const store = sqliteStore(join(mkdtempSync(join(tmpdir(), 'agentchart-door-')), 's.db'));
    const agent = createAgent({ model: scriptedModel([{ text: 'ok' }]), store, sessionId: 's' });
    await agent.ready;
    const assistant = {
      role: 'assistant',
      content: [{ type: 'toolCall', id: 'c1', name: 'pay', arguments: { cents: 10n } }],
      stopReason: 'toolUse',
    } as unknown as MessageInput;
    const refused = expect.objectContaining({
      name: 'AgentError',
      code: 'InvalidInput',
      message: 'Invalid message: message.content[0].arguments.cents is a BigInt, which JSON cannot hold',
    });
    expect(() => agent.prompt(['paid?', assistant])).toThrow(refused);
    expect(() => agent.steer(assistant)).toThrow(refused);
    expect(() => agent.followUp(assistant)).toThrow(refused);
    expect(agent.running).toBe(false);
    expect(await store.load('s')).toBeNull();
    store.close();
  });

  it('resolveApproval with approved arguments JSON cannot hold: InvalidInput, the approval stays pending', async () => {
    const store = sqliteStore(join(mkdtempSync(join(tmpdir(), 'agentchart-door-')), 's.db'));
    const pay = defineTool({
      name: 'pay',
      description: 'Pays.',
      parameters: z.object({ cents: z.unknown() }),
      requiresApproval: true,
      execute: ({ cents }) => `paid ${String(cents)}`,
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'c1', name: 'pay', arguments: { cents: 100 } }] },
      { text: 'Paid.' },
    ]);
    const agent = createAgent({ model, tools: [pay], store, sessionId: 's' });
    await agent.ready;
    const run = agent.prompt('pay');
    await expect.poll(() => agent.pendingApprovals().length).toBe(1);
    const [pending] = agent.pendingApprovals();
    const version = pending?.version ?? -1;
    expect(() => agent.resolveApproval('c1', { approved: true, arguments: { cents: 100n } }, { version })).toThrow(
      expect.objectContaining({
        code: 'InvalidInput',
        message: expect.stringContaining(
          'the approval decision holds what JSON cannot: decision.arguments.cents is a BigInt',
        ),
      }),
    );
    expect(agent.pendingApprovals()).toEqual([pending]);
    agent.resolveApproval('c1', { approved: true, arguments: { cents: 90 } }, { version });
    const result = await run.result;
    expect(result).toMatchObject({ status: 'completed', counters: { approvalsRequested: 1, toolCallsExecuted: 1 } });
    expect(result.messages.find((message) => message.role === 'toolResult')).toMatchObject({ content: 'paid 90' });
    await agent.close();
    store.close();
  });
});

describe('session ids a store cannot hold as given', () => {
  it.each([
    ['a lone high surrogate', 'chat-\uD83D'],
    ['a lone low surrogate', 'chat-\uDE00'],
    ['a reversed pair', 'chat-\uDE00\uD83D'],
    ['513 characters', 'x'.repeat(513)],
  ])('%s: InvalidInput at createAgent', (_name, sessionId) => {
    expect(() => createAgent({ model: scriptedModel([]), store: memoryStore(), sessionId })).toThrow(
      expect.objectContaining({
        name: 'AgentError',
        code: 'InvalidInput',
        message: expect.stringMatching(/sessionId/),
      }),
    );
  });

  it('well-formed ids (emoji, 512 characters) are stored and loaded apart on SQLite', async () => {
    const store = sqliteStore(join(mkdtempSync(join(tmpdir(), 'agentchart-door-')), 's.db'));
    const ids = ['chat-😀', 'chat-😁', 'y'.repeat(512)];
    for (const [index, sessionId] of ids.entries()) {
      const agent = createAgent({ model: scriptedModel([{ text: `answer ${index}` }]), store, sessionId });
      await agent.ready;
      await agent.prompt(`question ${index}`).result;
    }
    for (const [index, sessionId] of ids.entries()) {
      expect((await store.load(sessionId))?.history[0]).toEqual({ role: 'user', content: `question ${index}` });
    }
    expect((await store.list()).map((s) => s.sessionId).sort()).toEqual([...ids].sort());
    store.close();
  });
});
