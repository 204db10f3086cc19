import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentError, createAgent, defineTool, memoryStore, type AgentEvent, type SessionStore } from 'agentchart';
import type { SessionStep } from 'agentchart/store-kit';
import { sqliteStore } from 'agentchart/sqlite';
import { checkInvariants, scriptedModel } from 'agentchart/testing';

/** Store failures are fatal and typed: the run ends failed / storeFailed, no tool starts after, flush() rejects. */

const ran: string[] = [];
const work = defineTool({
  name: 'work',
  description: 'Does some work',
  parameters: z.object({ id: z.string() }),
  execute: async ({ id }) => {
    ran.push(id);
    return `did ${id}`;
  },
});
const twoCalls = () =>
  scriptedModel([
    {
      toolCalls: [
        { id: 'a', name: 'work', arguments: { id: 'a' } },
        { id: 'b', name: 'work', arguments: { id: 'b' } },
      ],
    },
    { text: 'Both done.' },
  ]);

/** Fails the write of the first step that carries an event matching `when`. */
function failingAt(
  store: SessionStore,
  when: (event: AgentEvent) => boolean,
  how: 'throw' | 'reject',
  failure = new Error('disk on fire'),
) {
  let failed = false;
  const write = (sessionId: string, step: SessionStep) => {
    if (!failed && step.events.some((e) => when(e as AgentEvent))) {
      failed = true;
      throw failure;
    }
    return store.commitStep(sessionId, step);
  };
  const commitStep = async (sessionId: string, step: SessionStep) => write(sessionId, step);
  return how === 'reject'
    ? ({ ...store, commitStepSync: undefined, commitStep } as SessionStore)
    : ({
        ...store,
        commitStep,
        commitStepSync: (sessionId: string, step: SessionStep) => void write(sessionId, step),
      } as SessionStore);
}

async function runToEnd(agent: ReturnType<typeof createAgent>) {
  await agent.ready;
  const run = agent.prompt('do the work');
  const events: AgentEvent[] = [];
  run.events.subscribe((event) => events.push(event));
  const result = await run.result;
  return { result, events };
}

describe('a failed write ends the run at once', () => {
  it.each(['throw', 'reject'] as const)(
    'a store that fails to %s at the first tool result: failed / storeFailed, the second tool never starts, flush() rejects',
    async (how) => {
      ran.length = 0;
      const store = failingAt(memoryStore(), (e) => e.type === 'toolExecutionEnd', how);
      const agent = createAgent({
        model: twoCalls(),
        tools: [work],
        toolExecution: 'sequential',
        store,
        sessionId: 's',
      });
      const { result, events } = await runToEnd(agent);
      expect(result).toMatchObject({
        status: 'failed',
        endReason: 'fatalError',
        error: {
          code: 'storeFailed',
          message: expect.stringMatching(/session "s": the store failed to write a step \(disk on fire\)/),
        },
      });
      expect(ran).toEqual(['a']);
      // The run's failure is counted by its code, in the result and in agentEnd.
      expect(result.counters.failureCodes).toEqual({ storeFailed: 1 });
      expect(events.at(-1)).toMatchObject({ type: 'agentEnd', counters: { failureCodes: { storeFailed: 1 } } });
      expect(
        events
          .filter((e) => e.type === 'toolExecutionStart')
          .map((e) => e.type === 'toolExecutionStart' && e.toolCallId),
      ).toEqual(['a']);
      expect(checkInvariants(events, result.messages).violations).toEqual([]);
      await expect(agent.flush()).rejects.toMatchObject({ name: 'AgentError', code: 'StoreFailed' });
      expect(() => agent.prompt('again')).toThrow(expect.objectContaining({ code: 'StoreFailed' }));
    },
  );

  it('the last step (agentEnd) fails to write: the result says storeFailed and counts it; agentEnd did not', async () => {
    ran.length = 0;
    const store = failingAt(memoryStore(), (e) => e.type === 'agentEnd', 'reject');
    const agent = createAgent({ model: twoCalls(), tools: [work], store, sessionId: 's' });
    const { result, events } = await runToEnd(agent);
    expect(result).toMatchObject({ status: 'failed', endReason: 'fatalError', error: { code: 'storeFailed' } });
    expect(result.counters.failureCodes).toEqual({ storeFailed: 1 });
    expect(agent.counters.failureCodes).toEqual({ storeFailed: 1 });
    expect(result.counters).toMatchObject({ turns: 2, modelCalls: 2, toolCallsRequested: 2, toolCallsExecuted: 2 });
    // agentEnd went out before the write failed: its counters are the run's as published.
    expect(events.at(-1)).toMatchObject({ type: 'agentEnd', status: 'completed', counters: { failureCodes: {} } });
    expect(checkInvariants(events, result.messages).violations).toEqual([]);
    await expect(agent.flush()).rejects.toMatchObject({ code: 'StoreFailed' });
  });

  it('a refused version (another writer advanced the session) is a store failure too', async () => {
    ran.length = 0;
    const base = memoryStore();
    let sneaked = false;
    const store: SessionStore = {
      ...base,
      commitStepSync: (sessionId, step) => {
        if (!sneaked && step.events.some((e) => e.type === 'toolExecutionStart')) {
          sneaked = true;
          // Another process writes the same version first.
          base.commitStepSync(sessionId, step);
        }
        base.commitStepSync(sessionId, step);
      },
    };
    const agent = createAgent({ model: twoCalls(), tools: [work], toolExecution: 'sequential', store, sessionId: 's' });
    const { result, events } = await runToEnd(agent);
    expect(result).toMatchObject({
      status: 'failed',
      error: { code: 'storeFailed', message: expect.stringContaining('StaleVersion') },
    });
    expect(ran).toEqual([]);
    expect(result.counters.failureCodes).toEqual({ storeFailed: 1 });
    expect(agent.counters.failureCodes).toEqual({ storeFailed: 1 });
    expect(checkInvariants(events, result.messages).violations).toEqual([]);
    await expect(agent.flush()).rejects.toMatchObject({ code: 'StoreFailed' });
  });

  it('an async store: every step is written before the next tool starts and before the run ends', async () => {
    ran.length = 0;
    const base = memoryStore();
    const log: string[] = [];
    const store: SessionStore = {
      ...base,
      commitStepSync: undefined,
      commitStep: async (sessionId, step) => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        base.commitStepSync(sessionId, step);
        for (const event of step.events)
          if (event.type === 'toolExecutionStart') log.push(`written start ${event.toolCallId}`);
      },
    };
    const logging = defineTool({
      ...work,
      name: 'work',
      execute: async ({ id }: { id: string }) => (log.push(`run ${id}`), `did ${id}`),
    });
    const agent = createAgent({
      model: twoCalls(),
      tools: [logging],
      toolExecution: 'sequential',
      store,
      sessionId: 's',
    });
    const { result } = await runToEnd(agent);
    expect(result.status).toBe('completed');
    expect(log).toEqual(['written start a', 'run a', 'written start b', 'run b']);
    // The run's result came after its last step (agentEnd) was written.
    expect((await base.loadEvents('s')).at(-1)?.type).toBe('agentEnd');
  });
});

/** A 1 MB tmpfs (root only); null when it cannot be mounted here. */
function smallDisk(): { dir: string; unmount(): void } | null {
  const dir = mkdtempSync(join(tmpdir(), 'agentchart-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    console.log(`disk-full test: cannot mount a small tmpfs here (${(error as Error).message.split('\n')[0]})`);
    return null;
  }
  return { dir, unmount: () => execFileSync('umount', ['-l', dir]) };
}

describe('disk full', () => {
  const disk = smallDisk();
  afterAll(() => disk?.unmount());
  it.skipIf(disk === null)(
    'SQLite on a full 1 MB disk: the run ends failed / storeFailed naming SQLITE_FULL, flush() rejects',
    async () => {
      ran.length = 0;
      const path = join((disk as { dir: string }).dir, 'sessions.db');
      mkdirSync((disk as { dir: string }).dir, { recursive: true });
      const store = sqliteStore(path);
      const big = defineTool({
        name: 'work',
        description: 'Returns a lot',
        parameters: z.object({ id: z.string() }),
        execute: ({ id }) => (ran.push(id), `${id}:${'x'.repeat(200_000)}`),
      });
      const model = scriptedModel(
        (_request, call) =>
          call < 20
            ? { toolCalls: [{ id: `c${call}`, name: 'work', arguments: { id: `c${call}` } }] }
            : { text: 'done' },
        { recordRequests: false },
      );
      const agent = createAgent({ model, tools: [big], store, sessionId: 's', replayBuffer: 0 });
      await agent.ready;
      const result = await agent.prompt('fill the disk').result;
      expect(result).toMatchObject({
        status: 'failed',
        endReason: 'fatalError',
        error: { code: 'storeFailed', message: expect.stringMatching(/full|SQLITE_FULL/i) },
      });
      expect(ran.length).toBeLessThan(20);
      await expect(agent.flush()).rejects.toBeInstanceOf(AgentError);
      // What was written before the disk filled still loads.
      expect((await store.load('s'))?.history[0]).toEqual({ role: 'user', content: 'fill the disk' });
      store.close();
    },
  );
});
