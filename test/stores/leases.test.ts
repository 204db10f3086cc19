import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import {
  AgentError,
  createAgent,
  defineTool,
  INTERRUPTED_BY_RESTART,
  memoryStore,
  type SessionStore,
} from 'agentchart';
import type { Lease } from 'agentchart/store-kit';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { deferred } from '../support/harness.js';

/**
 * One owner per session, as machine logic: the store's lease clock and the renewal
 * timers run on one SimulatedClock, so ttls pass without sleeping.
 */

const TTL = 3_000;
const macrotasks = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};
/** Moves the simulated clock in renewal-sized steps, letting each renewal reach the store. */
async function advance(clock: SimulatedClock, ms: number): Promise<void> {
  for (let moved = 0; moved < ms; moved += TTL / 6) {
    clock.increment(TTL / 6);
    await macrotasks();
  }
}

function setup() {
  const clock = new SimulatedClock();
  clock.set(1_700_000_000_000);
  const store = memoryStore({ now: () => clock.now() });
  const journal: string[] = [];
  const gates = new Map<string, ReturnType<typeof deferred<void>>>();
  const step = defineTool({
    name: 'step',
    description: 'Runs a step (never replayed)',
    parameters: z.object({ id: z.string() }),
    execute: async ({ id }) => {
      journal.push(id);
      await gates.get(id)?.promise;
      return `did ${id}`;
    },
  });
  const agentOn = (s: SessionStore, owner: string, model = scriptedModel([{ text: 'ok' }])) =>
    createAgent({
      model,
      tools: [step],
      toolExecution: 'sequential',
      store: s,
      sessionId: 'job',
      clock,
      lease: { ttlMs: TTL, owner },
    });
  return { clock, store, journal, gates, agentOn };
}

const twoStepScript = () => [
  {
    toolCalls: [
      { id: 'a', name: 'step', arguments: { id: 'a' } },
      { id: 'b', name: 'step', arguments: { id: 'b' } },
    ],
  },
  { text: 'Both steps done.' },
];
const twoSteps = () =>
  scriptedModel([
    {
      toolCalls: [
        { id: 'a', name: 'step', arguments: { id: 'a' } },
        { id: 'b', name: 'step', arguments: { id: 'b' } },
      ],
    },
    { text: 'Both steps done.' },
  ]);

describe('leases: one owner per session', () => {
  it('an idle agent holds nothing: a second agent loads and runs at once; a run in progress refuses the other (SessionBusy, owner and expiry)', async () => {
    const { store, gates, agentOn } = setup();
    const a = agentOn(store, 'alpha', scriptedModel([{ text: 'one' }, ...twoStepScript(), { text: 'three' }]));
    await a.ready;
    await a.prompt('first').result;
    // The lease went with the run: another agent runs the session at once.
    const b = agentOn(store, 'beta', scriptedModel([{ text: 'two' }]));
    await b.ready;
    expect((await b.prompt('second').result).status).toBe('completed');
    gates.set('a', deferred());
    const running = a.prompt('third');
    await macrotasks(5);
    // A's run holds the lease: B is refused at once, with the owner and the expiry; nothing is written.
    const before = (await store.load('job'))?.version;
    expect(() => b.prompt('again')).toThrow(
      expect.objectContaining({
        name: 'AgentError',
        code: 'SessionBusy',
        message: expect.stringMatching(/owner "alpha" holds its lease until \d{4}-\d\d-\d\dT[\d:.]+Z/),
      }),
    );
    await expect(b.steer('hello?')).rejects.toMatchObject({ code: 'SessionBusy' });
    expect(b.running).toBe(false);
    gates.get('a')?.resolve();
    await running.result;
    expect((await store.load('job'))?.version).toBeGreaterThan(before ?? 0);
    // A reloaded B's run before its own: every message of the session, in order.
    expect(a.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['first', 'second', 'third']);
  });

  it('a running agent renews its lease: ten ttls later a second agent is still refused; after the run it lapses', async () => {
    const { clock, store, gates, agentOn } = setup();
    gates.set('a', deferred());
    const first = agentOn(store, 'alpha', twoSteps());
    await first.ready;
    const run = first.prompt('work');
    await macrotasks(5);
    await advance(clock, 10 * TTL);
    await expect(agentOn(store, 'beta').ready).rejects.toMatchObject({ code: 'SessionBusy' });
    gates.get('a')?.resolve();
    expect((await run.result).status).toBe('completed');
    // Idle: nothing renews the lease; once it lapsed another agent takes the session.
    await advance(clock, TTL + 1);
    const second = agentOn(store, 'beta');
    await expect(second.ready).resolves.toEqual({ resumedRun: null });
    expect(second.messages).toEqual(first.messages);
  });

  it('an owner that died mid-run: after the ttl a second agent takes over (token 2) and resumes with the replay rules', async () => {
    const { clock, store, journal, gates, agentOn } = setup();
    gates.set('a', deferred());
    const { store: frozen, freeze } = freezable(store);
    const first = agentOn(frozen, 'alpha', twoSteps());
    await first.ready;
    void first.prompt('work');
    await macrotasks(5);
    expect(journal).toEqual(['a']);
    // The process stops (no renewal, no write) while step a runs.
    freeze();
    await advance(clock, TTL + 1);
    const second = agentOn(store, 'beta', scriptedModel([{ text: 'Resumed and done.' }]));
    const { resumedRun } = await second.ready;
    const result = await resumedRun?.result;
    expect(result?.status).toBe('completed');
    expect(journal).toEqual(['a', 'b']);
    expect(result?.messages.find((m) => m.role === 'toolResult' && m.toolCallId === 'a')).toMatchObject({
      content: INTERRUPTED_BY_RESTART,
      isError: true,
    });
    const stored = await store.loadEvents('job');
    expect(checkInvariants(stored, result?.messages).violations).toEqual([]);
    expect(new Set(stored.map((e) => e.runId)).size).toBe(1);
  });

  it('a fenced owner stops at its next step (failed, sessionLost) and never starts another tool', async () => {
    const { clock, store, journal, gates, agentOn } = setup();
    gates.set('a', deferred());
    const { store: pausable, pause } = freezable(store);
    const first = agentOn(pausable, 'alpha', twoSteps());
    await first.ready;
    const run = first.prompt('work');
    await macrotasks(5);
    // A long pause (a GC, a suspended VM): the first agent's renewals do not reach the store.
    const resume = pause();
    await advance(clock, TTL + 1);
    const second = agentOn(store, 'beta', scriptedModel([{ text: 'Taken over.' }]));
    const taken = await second.ready;
    await taken.resumedRun?.result;
    // The first agent wakes up: its tool ends, its write is refused, it stops.
    resume();
    gates.get('a')?.resolve();
    const result = await run.result;
    expect(result).toMatchObject({
      status: 'failed',
      endReason: 'fatalError',
      error: {
        code: 'sessionLost',
        message: expect.stringMatching(/fenced by token 2 \(owner "beta"\)|the store has token 2 of owner "beta"/),
      },
    });
    expect(journal.filter((id) => id === 'b')).toEqual(['b']);
    expect(journal.filter((id) => id === 'a')).toEqual(['a']);
    // The run's failure is counted by its code.
    expect(result.counters.failureCodes).toEqual({ sessionLost: 1 });
    expect(first.counters.failureCodes).toEqual({ sessionLost: 1 });
    await expect(first.flush()).rejects.toMatchObject({ code: 'SessionLost' });
    expect(() => first.prompt('again')).toThrow(expect.objectContaining({ code: 'SessionLost' }));
  });

  it('close() releases the lease: another agent takes the session at once', async () => {
    const { store, agentOn } = setup();
    const first = agentOn(store, 'alpha');
    await first.ready;
    await first.prompt('hello').result;
    await first.close();
    expect(() => first.prompt('again')).toThrow(expect.objectContaining({ code: 'Closed' }));
    expect(() => first.steer('more')).toThrow(expect.objectContaining({ code: 'Closed' }));
    const second = agentOn(store, 'beta', scriptedModel([{ text: 'Hello again.' }]));
    await second.ready;
    expect((await second.prompt('again').result).messages).toHaveLength(4);
  });

  it.each([[{ ttlMs: 0 }], [{ ttlMs: 1.5 }], [{ ttlMs: Number.NaN }], [{ owner: '' }]])(
    'lease %j is InvalidOptions',
    (lease) => {
      expect(() => createAgent({ model: scriptedModel([]), store: memoryStore(), sessionId: 's', lease })).toThrow(
        AgentError,
      );
    },
  );
});

/**
 * The store as one process sees it. `freeze()`: the process is gone (no call reaches the store
 * again). `pause()`: its calls wait until the returned resume function is called.
 */
function freezable(store: SessionStore) {
  let frozen = false;
  let paused: Promise<void> | null = null;
  const gate = async () => {
    if (frozen) await new Promise(() => {});
    if (paused) await paused;
  };
  const through: SessionStore = {
    ...store,
    commitStepSync: undefined,
    commitStep: async (id, step) => (await gate(), store.commitStep(id, step)),
    renew: async (id, lease: Lease, ttl) => (await gate(), store.renew(id, lease, ttl)),
    release: async (id, lease: Lease) => (await gate(), store.release(id, lease)),
  };
  return {
    store: through,
    freeze: () => (frozen = true),
    pause: () => {
      let resume: () => void = () => {};
      paused = new Promise((resolve) => (resume = resolve));
      return () => {
        paused = null;
        resume();
      };
    },
  };
}
