import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type AgentEvent, type SessionStore } from 'agentchart';
import { checkInvariants, scriptedModel } from 'agentchart/testing';

/**
 * A run waiting for a durable approval parks: its state is stored and its lease let go, so any
 * handle may answer. The same handle answering goes on as before; another handle answering takes
 * the run over (its subscribers get the rest) and the first handle's run ends `movedOn`.
 */

const macrotasks = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

function setup(store: SessionStore = memoryStore()) {
  const ran: string[] = [];
  const deploy = defineTool({
    name: 'deploy',
    description: 'Deploys (needs approval).',
    parameters: z.object({ target: z.string() }),
    requiresApproval: true,
    execute: ({ target }) => (ran.push(target), `deployed to ${target}`),
  });
  const model = () =>
    scriptedModel(
      (request) => {
        const last = request.messages.at(-1);
        if (last?.role === 'user' && last.content === 'Deploy.')
          return { toolCalls: [{ id: 'd1', name: 'deploy', arguments: { target: 'prod' } }] };
        return { text: last?.role === 'user' ? `Noted: ${last.content}` : 'Done.' };
      },
      { recordRequests: false },
    );
  const handle = (owner: string) =>
    createAgent({ model: model(), tools: [deploy], store, sessionId: 'chat', lease: { owner } });
  return { store, ran, handle };
}

async function parked(handle: ReturnType<typeof setup>['handle']) {
  const first = handle('first');
  await first.ready;
  const run = first.prompt('Deploy.');
  const seen: AgentEvent[] = [];
  run.events.subscribe((event) => seen.push(event));
  for (let i = 0; i < 20 && first.pendingApprovals().length === 0; i++) await macrotasks();
  const [pending] = first.pendingApprovals();
  if (!pending) throw new Error('the run did not reach its approval');
  return { first, run, seen, pending };
}

describe('a run parked at a durable approval', () => {
  it('holds no lease: another agent acquires at once; the same handle answering takes it back and goes on', async () => {
    const { store, ran, handle } = setup();
    const { first, run, pending } = await parked(handle);
    const lease = await store.acquire('chat', 'someone-else', 1_000);
    await store.release('chat', lease);
    expect(first.running).toBe(true);
    const continued = first.resolveApproval('d1', { approved: true }, { version: pending.version });
    expect(continued.runId).toBe(run.runId);
    expect(await run.result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(ran).toEqual(['prod']);
    expect(checkInvariants(await store.loadEvents('chat'), first.messages).violations).toEqual([]);
  });

  it('another handle answers: it continues the run (its subscribers get the rest); the first handle is told it moved on', async () => {
    const { store, ran, handle } = setup();
    const { first, run, seen, pending } = await parked(handle);
    const second = handle('second');
    expect(await second.ready).toEqual({ resumedRun: null });
    expect(second.pendingApprovals()).toEqual([pending]);
    const continued = second.resolveApproval('d1', { approved: true }, { version: pending.version });
    const rest: AgentEvent[] = [];
    continued.events.subscribe((event) => rest.push(event));
    expect(continued.runId).toBe(run.runId);
    expect(await run.result).toMatchObject({ status: 'movedOn', endReason: 'movedOn' });
    expect(first.running).toBe(false);
    expect(await continued.result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(ran).toEqual(['prod']);
    expect(rest[0]?.type).toBe('toolApprovalResolved');
    expect(rest.at(-1)?.type).toBe('agentEnd');
    // The first handle saw the run up to its approval; the second the rest; the store holds it all, once.
    expect(seen.at(-1)?.type).toBe('toolApprovalRequested');
    expect(Math.min(...rest.map((e) => e.seq))).toBeGreaterThan(Math.max(...seen.map((e) => e.seq)));
    const stored = await store.loadEvents('chat');
    expect(stored.map((e) => e.seq)).toEqual([...seen, ...rest].map((e) => e.seq));
    expect(checkInvariants(stored, second.messages).violations).toEqual([]);
    // Too late for the first handle: the approval is answered.
    expect(() => first.resolveApproval('d1', { approved: true }, { version: pending.version })).toThrow(
      expect.objectContaining({ code: 'UnknownToolCall' }),
    );
    first.abort('no effect');
    expect(await first.prompt('Thanks.').result).toMatchObject({ status: 'completed' });
  });

  it('a steer to the parked run (its own handle): the approval is withdrawn, the run goes on with the steering', async () => {
    const { store, ran, handle } = setup();
    const { first, run } = await parked(handle);
    expect(await first.steer('Actually, wait.')).toMatchObject({ status: 'delivered' });
    expect(await run.result).toMatchObject({ status: 'completed' });
    expect(ran).toEqual([]);
    const stored = await store.loadEvents('chat');
    expect(stored.find((e) => e.type === 'toolApprovalResolved')).toMatchObject({ approved: false });
    expect(checkInvariants(stored, first.messages).violations).toEqual([]);
  });

  it('a steer from another handle: it continues the run, the request is withdrawn (resolved, denied) and stored so', async () => {
    const { store, ran, handle } = setup();
    const { run } = await parked(handle);
    const second = handle('second');
    await second.ready;
    expect(await second.steer('Actually, wait.')).toMatchObject({ status: 'delivered' });
    expect(await run.result).toMatchObject({ status: 'movedOn' });
    for (let i = 0; i < 20 && second.running; i++) await macrotasks();
    await second.flush();
    expect(ran).toEqual([]);
    const stored = await store.loadEvents('chat');
    expect(stored.filter((e) => e.type === 'toolApprovalRequested')).toHaveLength(1);
    expect(stored.filter((e) => e.type === 'toolApprovalResolved')).toMatchObject([{ approved: false }]);
    expect(stored.at(-1)).toMatchObject({ type: 'agentEnd', status: 'completed' });
    expect(checkInvariants(stored, second.messages).violations).toEqual([]);
  });

  it('abort() of the parked run: it takes its lease back and ends aborted, stored', async () => {
    const { store, ran, handle } = setup();
    const { first, run } = await parked(handle);
    first.abort('changed my mind');
    expect(await run.result).toMatchObject({ status: 'aborted', error: { message: 'changed my mind' } });
    expect(ran).toEqual([]);
    expect((await store.loadEvents('chat')).at(-1)).toMatchObject({ type: 'agentEnd', status: 'aborted' });
    expect((await store.load('chat'))?.run).toBeNull();
  });

  it('a follow-up from another handle continues the parked run there (it stays parked at its approval)', async () => {
    const { handle } = setup();
    const { run, pending } = await parked(handle);
    const second = handle('second');
    await second.ready;
    const receipt = second.followUp('And tell me after.');
    await macrotasks(10);
    expect(await run.result).toMatchObject({ status: 'movedOn' });
    expect(second.running).toBe(true);
    expect(second.pendingApprovals()).toMatchObject([{ toolCallId: 'd1' }]);
    const [now] = second.pendingApprovals();
    const continued = second.resolveApproval('d1', { approved: true }, { version: now?.version ?? pending.version });
    await continued.result;
    expect(await receipt).toMatchObject({ status: 'delivered' });
  });

  it('with a store that answers asynchronously (a server store): the same handle, and another one, continue it', async () => {
    const base = memoryStore();
    const asyncStore: SessionStore = {
      ...base,
      commitStepSync: undefined,
      acquireSync: undefined,
      loadSync: undefined,
    };
    const own = setup(asyncStore);
    const mine = await parked(own.handle);
    const continued = mine.first.resolveApproval('d1', { approved: true }, { version: mine.pending.version });
    expect(continued.runId).toBe(mine.run.runId);
    expect(await mine.run.result).toMatchObject({ status: 'completed' });
    expect(own.ran).toEqual(['prod']);

    const other = setup({ ...memoryStore(), commitStepSync: undefined, acquireSync: undefined, loadSync: undefined });
    const theirs = await parked(other.handle);
    const second = other.handle('second');
    await second.ready;
    const taken = second.resolveApproval('d1', { approved: true }, { version: theirs.pending.version });
    expect(await taken.result).toMatchObject({ status: 'completed' });
    expect(await theirs.run.result).toMatchObject({ status: 'movedOn' });
    expect(other.ran).toEqual(['prod']);
  });
});
