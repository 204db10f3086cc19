import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type Agent, type SessionStore } from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';
import { deferred } from '../support/harness.js';

/**
 * Nothing a caller hands over is lost: a message given before `ready` is applied after the load and
 * stored; after `close()` the agent refuses with AgentError('Closed'); a `stillQueued` receipt is
 * given only for a message that is queued and stored. `snapshot()` and `pendingApprovals()` read
 * what the machines hold, the same as the stored checkpoint.
 */

const user = (content: string) => ({ role: 'user' as const, content });
const texts = (messages: ReadonlyArray<{ role: string; content?: unknown }>) =>
  messages.map((m) => (m.role === 'user' ? m.content : `(${m.role})`));

const stores: Array<[string, () => SessionStore]> = [
  ['memoryStore', () => memoryStore()],
  ['sqliteStore', () => sqliteStore(join(mkdtempSync(join(tmpdir(), 'agentchart-inputs-')), 's.db'))],
];

describe.each(stores)('messages handed over (%s)', (_name, open) => {
  it('steer() and followUp() before ready: applied after the load, stored, never replaced by it', async () => {
    const store = open();
    const seed = createAgent({ model: scriptedModel([{ text: 'hello' }]), store, sessionId: 's' });
    await seed.ready;
    await seed.prompt('first').result;
    await seed.followUp('queued by the first agent');

    const agent = createAgent({ model: scriptedModel([]), store, sessionId: 's' });
    const steered = agent.steer('steered before ready');
    const followed = agent.followUp('followed up before ready');
    await agent.ready;
    expect(await steered).toEqual({ status: 'stillQueued' });
    expect(await followed).toEqual({ status: 'stillQueued' });
    expect(texts(agent.snapshot().steeringQueue)).toEqual(['steered before ready']);
    expect(texts(agent.snapshot().followUpQueue)).toEqual(['queued by the first agent', 'followed up before ready']);
    const stored = await store.load('s');
    expect(texts(stored?.steeringQueue ?? [])).toEqual(['steered before ready']);
    expect(texts(stored?.followUpQueue ?? [])).toEqual(['queued by the first agent', 'followed up before ready']);
    expect(texts(stored?.history ?? [])).toEqual(['first', '(assistant)']);
  });

  it('after close(): prompt, continue, steer, followUp and resolveApproval throw Closed, and nothing is stored', async () => {
    const store = open();
    const agent = createAgent({ model: scriptedModel([{ text: 'hi' }]), store, sessionId: 's' });
    await agent.ready;
    await agent.prompt('hello').result;
    await agent.close();
    const version = (await store.load('s'))?.version;
    const closed = expect.objectContaining({ name: 'AgentError', code: 'Closed' });
    expect(() => agent.steer('too late')).toThrow(closed);
    expect(() => agent.followUp('too late')).toThrow(closed);
    expect(() => agent.prompt('too late')).toThrow(closed);
    expect(() => agent.continue()).toThrow(closed);
    expect(() => agent.resolveApproval('x', { approved: true }, { version: 0 })).toThrow(closed);
    expect((await store.load('s'))?.version).toBe(version);
  });

  it('a queued message whose write fails is refused (StoreFailed), never answered stillQueued', async () => {
    const base = open();
    let failing = false;
    const store: SessionStore = {
      ...base,
      commitStepSync: (sessionId, step) => {
        if (failing) throw new Error('disk on fire');
        base.commitStepSync?.(sessionId, step);
      },
    };
    const agent = createAgent({ model: scriptedModel([{ text: 'hi' }]), store, sessionId: 's' });
    await agent.ready;
    await agent.prompt('hello').result;
    failing = true;
    await expect(agent.followUp('lost?')).rejects.toMatchObject({ code: 'StoreFailed' });
  });
});

describe.each(stores)('snapshot(), the stored checkpoint and pendingApprovals() agree (%s)', (_name, open) => {
  it('through every change the API allows: runs, steering and follow-ups in and between runs, approvals, abort, continue', async () => {
    const store = open();
    const gate = deferred<void>();
    const slow = defineTool({
      name: 'slow',
      description: 'Takes a while.',
      parameters: z.object({}),
      execute: async () => (await gate.promise, 'slow done'),
    });
    const deploy = defineTool({
      name: 'deploy',
      description: 'Needs approval.',
      parameters: z.object({ target: z.string() }),
      requiresApproval: true,
      execute: ({ target }) => `deployed ${target}`,
    });
    const model = scriptedModel(
      (request) => {
        const last = request.messages.at(-1);
        if (last?.role === 'user' && last.content === 'work')
          return { toolCalls: [{ id: 's1', name: 'slow', arguments: {} }] };
        if (last?.role === 'user' && last.content === 'ship')
          return { toolCalls: [{ id: 'd1', name: 'deploy', arguments: { target: 'prod' } }] };
        return { text: `answered ${request.messages.length}` };
      },
      { recordRequests: false },
    );
    const agent = createAgent({
      model,
      tools: [slow, deploy],
      store,
      sessionId: 's',
      steeringInterrupts: false,
      steeringMode: 'oneAtATime',
      followUpMode: 'oneAtATime',
    });
    await agent.ready;
    const agree = async (when: string) => {
      await agent.flush();
      const stored = await store.load('s');
      const snapshot = agent.snapshot();
      expect(
        {
          messages: snapshot.messages,
          steeringQueue: snapshot.steeringQueue,
          followUpQueue: snapshot.followUpQueue,
          turnIndex: snapshot.turnIndex,
          counters: snapshot.counters,
        },
        when,
      ).toEqual({
        messages: stored?.history,
        steeringQueue: stored?.steeringQueue,
        followUpQueue: stored?.followUpQueue,
        turnIndex: stored?.turnIndex,
        counters: stored?.counters,
      });
      expect(agent.pendingApprovals(), when).toEqual(stored?.run?.turn?.pendingApprovals ?? []);
      return snapshot;
    };

    // Between runs: queued and stored.
    await agent.followUp('follow-up between runs');
    await agent.steer('steer between runs');
    expect(texts((await agree('queued between runs')).steeringQueue)).toEqual(['steer between runs']);

    // continue() drains them into a run.
    await agent.continue().result;
    expect(await agree('after continue() drained the queues')).toMatchObject({ steeringQueue: [], followUpQueue: [] });

    // A run whose tool is running: what is steered and followed up meanwhile sits in the master's queues.
    const run = agent.prompt('work');
    await until(() => agent.snapshot().messages.some((m) => m.role === 'assistant'));
    const during = [agent.steer('steered during the tool'), agent.followUp('followed up during the tool')];
    let snapshot = await agree('while the tool runs');
    expect(texts(snapshot.steeringQueue)).toContain('steered during the tool');
    expect(texts(snapshot.followUpQueue)).toContain('followed up during the tool');
    expect(snapshot.running).toBe(true);
    gate.resolve();
    await run.result;
    await Promise.all(during);
    snapshot = await agree('after the run');
    expect(snapshot).toMatchObject({ steeringQueue: [], followUpQueue: [], running: false });

    // A durable approval: the same in the snapshot, the checkpoint and pendingApprovals().
    const shipping = agent.prompt('ship');
    await until(() => agent.pendingApprovals().length > 0);
    const [pending] = await agree('waiting for the approval').then(() => agent.pendingApprovals());
    expect(pending).toMatchObject({ toolCallId: 'd1', toolName: 'deploy' });
    void agent.followUp('followed up while waiting');
    await agree('a follow-up while waiting');
    const continued = agent.resolveApproval('d1', { approved: true }, { version: pending?.version ?? -1 });
    expect(continued.runId).toBe(shipping.runId);
    await shipping.result;
    await agree('after the approval');

    // An aborted run, then continue() with what is still queued.
    const aborted = agent.prompt('work');
    void agent.steer('steered before the abort');
    agent.abort('enough');
    expect((await aborted.result).status).toBe('aborted');
    await agree('after the abort');
    await agent.followUp('last follow-up');
    const last = agent.continue();
    await last.result;
    expect((await agree('after continue()')).followUpQueue).toEqual([]);
  });
});

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
  expect(condition()).toBe(true);
}

export type { Agent };
export { user };
