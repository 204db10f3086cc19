import { mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AgentError,
  createAgent,
  defineTool,
  memoryStore,
  type AgentEvent,
  type AgentRun,
  type RunResult,
  type SessionStore,
} from 'agentchart';
import type { SessionStep } from 'agentchart/store-kit';
import { sqliteStore } from 'agentchart/sqlite';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { step, user } from '../stores/conformance.js';
import { expectSaneCounters, logOf, settleRun, watchTheProcess } from './harness.js';

/**
 * Damaged and unavailable stores (the hostile-input contract for stores): typed errors naming the path or session,
 * checkpoints validated before they are written, and a resumed log that still pairs. Every run case
 * asserts: the run settles, the typed error (or the outcome) it expects, the invariants on the run's
 * log and on the stored log, the user's input in history, finite non-negative counters, the stored
 * session loads again, and no unhandled rejection reached the process.
 */

watchTheProcess();

const tempDir = () => mkdtempSync(join(tmpdir(), 'agentchart-hostile-store-'));
const tempDb = () => join(tempDir(), 'sessions.db');
const quoted = (path: string) => new RegExp(`"${path.replace(/[/.\\-]/g, '\\$&')}"`);

/** The run settled (no hang), its result and its whole log. */
async function settled(run: AgentRun): Promise<{ result: RunResult; events: AgentEvent[] }> {
  const result = await settleRun(run);
  return { result, events: logOf(run) };
}

/**
 * The stored session loads in a fresh agent (which finishes a run the failure interrupted): its
 * counters are sane, the input is in history, and the stored log of the whole session pairs.
 */
async function expectStoredSessionLoads(store: SessionStore, sessionId: string, input: string): Promise<void> {
  const checkpoint = await store.load(sessionId);
  expect(checkpoint).not.toBeNull();
  expect(checkpoint).not.toBeNull();
  if (checkpoint) expectSaneCounters(checkpoint.counters);
  expect(checkpoint?.history).toContainEqual(user(input));
  time += LEASE.ttlMs + 1;
  const again = createAgent({ model: scriptedModel(() => ({ text: 'resumed' })), store, sessionId });
  const { resumedRun } = await again.ready;
  if (resumedRun) expect((await resumedRun.result).status).toBe('completed');
  await again.flush();
  await again.close();
  const stored = await store.loadEvents(sessionId);
  expect(checkInvariants(stored, again.messages).violations).toEqual([]);
  expectSaneCounters(again.counters);
}

/** The clock the stores' leases expire on: moved past a dead owner's lease, never slept on. */
let time = 1_700_000_000_000;
const now = () => time;
const LEASE = { ttlMs: 1_000 };

/**
 * A store whose process "dies" on demand: from then on nothing it is given reaches the data and its
 * lease is never renewed nor released; `die()` returns once the lease has expired on the store's clock.
 */
function dyingStore(
  store: SessionStore & { commitStepSync: NonNullable<SessionStore['commitStepSync']> },
  dieAfter?: (step: SessionStep) => boolean,
  dieBefore?: (step: SessionStep) => boolean,
) {
  let dead = false;
  const commitStepSync = (sessionId: string, s: SessionStep) => {
    if (dead) return;
    // Killed while this step was being written: it never reached the store.
    if (dieBefore?.(s)) return die();
    store.commitStepSync(sessionId, s);
    // Killed right after this step reached the store.
    if (dieAfter?.(s)) die();
  };
  const silentWhenDead =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A) =>
      dead ? new Promise<R>(() => {}) : call(...args);
  const dying: SessionStore = {
    ...store,
    commitStepSync,
    commitStep: async (id, s) => commitStepSync(id, s),
    renew: silentWhenDead(store.renew),
    release: silentWhenDead(store.release),
  };
  function die() {
    dead = true;
    time += LEASE.ttlMs + 1;
  }
  return { store: dying, die };
}

describe('stores that cannot be opened are StoreUnavailable, naming the path', () => {
  it.each([
    ['a directory', () => tempDir()],
    ['a file in a missing directory', () => join(tempDir(), 'missing', 'sessions.db')],
    ['a path under /proc', () => '/proc/agentchart-sessions.db'],
  ])('%s', (_name, makePath) => {
    const path = makePath();
    const attempt = () => sqliteStore(path);
    expect(attempt).toThrow(AgentError);
    expect(attempt).toThrow(
      expect.objectContaining({ code: 'StoreUnavailable', message: expect.stringMatching(quoted(path)) }),
    );
  });

  it('an empty path is InvalidOptions', () => {
    expect(() => sqliteStore('')).toThrow(expect.objectContaining({ code: 'InvalidOptions' }));
  });
});

describe('damaged files are StoreCorrupted, never a silent reset', () => {
  it('a file that is not a database names the file and is left as it was', () => {
    const path = tempDb();
    writeFileSync(path, 'this is not sqlite '.repeat(500));
    expect(() => sqliteStore(path)).toThrow(
      expect.objectContaining({ code: 'StoreCorrupted', message: expect.stringMatching(quoted(path)) }),
    );
    expect(readFileSync(path, 'utf8').startsWith('this is not sqlite')).toBe(true);
  });

  it('a database truncated mid-page', async () => {
    const path = tempDb();
    const store = sqliteStore(path);
    for (let version = 0; version < 50; version++) {
      await store.commitStep(
        's1',
        step(
          version,
          version * 40,
          Array.from({ length: 40 }, (_, i) => user(`message ${version}.${i} `.repeat(20))),
        ),
      );
    }
    store.close();
    truncateSync(path, Math.floor(statSync(path).size / 3) + 100);
    const reopen = async () => {
      const damaged = sqliteStore(path);
      try {
        await damaged.load('s1');
        await damaged.loadEvents('s1');
      } finally {
        damaged.close();
      }
    };
    await expect(reopen()).rejects.toMatchObject({
      name: 'AgentError',
      code: 'StoreCorrupted',
      message: expect.stringMatching(quoted(path)),
    });
  });

  it('a damaged checkpoint row or message row names the session; the agent is NotReady, not fresh', async () => {
    const path = tempDb();
    const store = sqliteStore(path);
    await store.commitStep('s1', step(0, 0, [user('v0')]));
    await store.commitStep('s2', step(0, 0, [user('v0')], [], 's2'));
    store.close();
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(path);
    db.prepare(`UPDATE sessions SET head = '{"sessionId":"s1","version":"x"' WHERE session_id = 's1'`).run();
    db.prepare(
      `UPDATE messages SET message = '{"role":"user"}' WHERE sid = (SELECT sid FROM sessions WHERE session_id = 's2')`,
    ).run();
    db.close();
    const reopened = sqliteStore(path);
    await expect(reopened.load('s1')).rejects.toMatchObject({
      code: 'StoreCorrupted',
      message: expect.stringMatching(/^session "s1": the stored checkpoint is not valid JSON/),
    });
    await expect(reopened.load('s2')).rejects.toMatchObject({
      code: 'StoreCorrupted',
      message: expect.stringMatching(/^session "s2": stored message 0 is invalid/),
    });
    const agent = createAgent({ model: scriptedModel([]), store: reopened, sessionId: 's2' });
    await expect(agent.ready).rejects.toMatchObject({ code: 'StoreCorrupted' });
    expect(() => agent.prompt('hi')).toThrow(expect.objectContaining({ code: 'NotReady' }));
    reopened.close();
  });
});

describe('a checkpoint is validated before it is written', () => {
  it.each([
    ['NaN', Number.NaN],
    ['a negative number', -5],
    ['a string', '0lots'],
  ])('usage of %s never reaches the store; the session loads again', async (_name, bad) => {
    const store = memoryStore({ now });
    const written: SessionStep[] = [];
    const watching: SessionStore = {
      ...store,
      commitStepSync: (id, s) => (written.push(s), store.commitStepSync(id, s)),
    };
    const model = scriptedModel([{ text: 'Counted.', usage: { input: bad as number, output: 2 } }]);
    const agent = createAgent({ model, store: watching, sessionId: 's' });
    await agent.ready;
    const { result, events } = await settled(agent.prompt('count this'));
    expect(result.status).toBe('completed');
    expect(checkInvariants(events, result.messages).violations).toEqual([]);
    expectSaneCounters(result.counters);
    expect(result.messages).toContainEqual(user('count this'));
    expect(written.length).toBeGreaterThan(0);
    for (const s of written) expectSaneCounters(s.checkpoint.counters);
    await agent.close();
    await expectStoredSessionLoads(store, 's', 'count this');
  });
});

describe('after a resume the stored log still pairs', () => {
  it.each([
    ['a text answer', { text: 'All done.' }, 'complete', 'completed'],
    ['a failed reply', { text: 'half', error: { kind: 'auth' as const, message: 'key revoked' } }, 'error', 'failed'],
  ])(
    // The step that publishes a reply without tool calls also commits it and closes the turn: a
    // crash cannot fall between them. It can cut that step short: the resumed run asks again.
    'a crash while %s is published (its step never reached the store): the resumed turn ends as that reply did',
    async (_name, last, reason, status) => {
      const base = memoryStore({ now });
      const { store } = dyingStore(base, undefined, (step) =>
        step.events.some((e) => e.type === 'messageEnd' && e.turnIndex === 1),
      );
      const tool = defineTool({ name: 'look', description: 'Looks', parameters: z.object({}), execute: () => 'seen' });
      const script = () =>
        scriptedModel((request) =>
          request.messages.some((m) => m.role === 'assistant')
            ? last
            : { toolCalls: [{ id: 'l1', name: 'look', arguments: {} }] },
        );
      const first = createAgent({ model: script(), tools: [tool], store, sessionId: 's', lease: LEASE });
      await first.ready;
      await first.prompt('look around').result;

      const second = createAgent({ model: script(), tools: [tool], store: base, sessionId: 's', lease: LEASE });
      const { resumedRun } = await second.ready;
      const { result } = await settled(resumedRun as AgentRun);
      expect(result.status).toBe(status);
      const stored = await base.loadEvents('s');
      expect(checkInvariants(stored, result.messages).violations).toEqual([]);
      expect(stored.filter((e) => e.type === 'turnEnd').map((e) => e.type === 'turnEnd' && e.reason)).toEqual([
        'toolsExecuted',
        reason,
      ]);
      expect(stored.filter((e) => e.type === 'messageStart')).toHaveLength(2);
      expectSaneCounters(result.counters);
      await expectStoredSessionLoads(base, 's', 'look around');
    },
  );

  it('a crash in the middle of a buffered stream: the resumed run calls the model again under one messageStart', async () => {
    const path = tempDb();
    const raw = sqliteStore(path, { now });
    const { store, die } = dyingStore(raw);
    const first = createAgent({
      model: scriptedModel([{ text: 'partial', stall: true }]),
      store,
      sessionId: 's',
      lease: LEASE,
    });
    await first.ready;
    const run = first.prompt('summarize');
    await new Promise<void>((resolve) =>
      run.events.subscribe((event) => event.type === 'beforeModelCall' && resolve()),
    );
    die();
    first.abort('the process died');
    await run.result;

    const model = scriptedModel([{ text: 'Summary.' }]);
    const second = createAgent({ model, store: raw, sessionId: 's', lease: LEASE });
    const { resumedRun } = await second.ready;
    const { result } = await settled(resumedRun as AgentRun);
    expect(result.status).toBe('completed');
    const stored = await raw.loadEvents('s');
    expect(checkInvariants(stored, result.messages).violations).toEqual([]);
    expect(stored.filter((e) => e.type === 'messageStart')).toHaveLength(1);
    expect(model.calls).toBe(1);
    expectSaneCounters(result.counters);
    await expectStoredSessionLoads(raw, 's', 'summarize');
    raw.close();
  });
});
