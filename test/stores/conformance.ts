import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';
import type { Message, SessionStore } from 'agentchart';
import { zeroCounters } from 'agentchart/model-kit';
import type { SessionHead, SessionStep, StoredEvent } from 'agentchart/store-kit';
import { thisProcess } from '../../src/store/lease-holder.js';

/** The pid of a process that has exited (a short-lived child, reaped). */
function deadPid(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', '']);
    child.once('error', reject);
    child.once('exit', () => resolve(child.pid as number));
  });
}

/** A store under test; `reopen` gives a second handle on the same data (another process would). */
export interface StoreUnderTest {
  store: SessionStore;
  reopen(): SessionStore;
  close(): Promise<void> | void;
}

export const user = (content: string): Message => ({ role: 'user', content });

export function head(version: number, historyLength: number, sessionId = 's1'): SessionHead {
  return {
    sessionId,
    version,
    historyLength,
    steeringQueue: [],
    followUpQueue: [],
    counters: zeroCounters(),
    turnIndex: 0,
    run: null,
  };
}

/** A step appending `messages` to a history of `from` messages. */
export function step(
  version: number,
  from: number,
  messages: Message[],
  events: StoredEvent[] = [],
  sessionId = 's1',
): SessionStep {
  return { checkpoint: head(version, from + messages.length, sessionId), history: { from, messages }, events };
}

/**
 * The one suite every SessionStore passes (long sessions, one owner per session): versioned steps, appended history and
 * events, history references in events, typed refusals, reopening.
 */
export function storeConformance(open: (now: () => number) => Promise<StoreUnderTest> | StoreUnderTest): void {
  // The clock leases expire on: moved by the lease cases, never slept on.
  let time = 1_700_000_000_000;
  const now = () => time;
  const withStore = (body: (subject: StoreUnderTest) => Promise<void>) => async () => {
    time = 1_700_000_000_000;
    const subject = await open(now);
    try {
      await body(subject);
    } finally {
      await subject.close();
    }
  };

  it(
    'commits steps in version order; load assembles the history; loadEvents, list and delete',
    withStore(async ({ store }) => {
      expect(await store.load('s1')).toBeNull();
      await store.commitStep('s1', step(0, 0, [user('a')], [{ type: 'agentStart', runId: 'r', seq: 0 }]));
      await store.commitStep(
        's1',
        step(1, 1, [user('b'), user('c')], [{ type: 'turnStart', runId: 'r', seq: 1, turnIndex: 0 }]),
      );
      const loaded = await store.load('s1');
      expect(loaded).toMatchObject({
        sessionId: 's1',
        version: 1,
        history: [user('a'), user('b'), user('c')],
        run: null,
      });
      expect(loaded).not.toHaveProperty('historyLength');
      expect((await store.loadEvents('s1')).map((e) => e.seq)).toEqual([0, 1]);
      expect((await store.loadEvents('s1', { from: 1 })).map((e) => e.seq)).toEqual([1]);
      expect((await store.list()).map((s) => [s.sessionId, s.version, s.running])).toEqual([['s1', 1, false]]);
      await store.delete('s1');
      expect(await store.load('s1')).toBeNull();
      expect(await store.loadEvents('s1')).toEqual([]);
      expect(await store.list()).toEqual([]);
    }),
  );

  it(
    'a step may replace the end of the history (a discarded reply, a replaced assistant message)',
    withStore(async ({ store }) => {
      await store.commitStep('s1', step(0, 0, [user('a'), user('b'), user('c')]));
      await store.commitStep('s1', step(1, 1, [user('B')]));
      expect((await store.load('s1'))?.history).toEqual([user('a'), user('B')]);
      await store.commitStep('s1', step(2, 2, []));
      expect((await store.load('s1'))?.history).toEqual([user('a'), user('B')]);
    }),
  );

  it(
    'refuses a step whose version does not follow the stored one, or whose history does not add up',
    withStore(async ({ store }) => {
      await store.commitStep('s1', step(0, 0, [user('a')]));
      const stale = store.commitStep('s1', step(0, 1, []));
      await expect(stale).rejects.toMatchObject({ name: 'AgentError', code: 'StaleVersion' });
      await expect(stale).rejects.toThrow(/session "s1": version 0 does not follow the stored version 0/);
      await expect(store.commitStep('s1', step(2, 1, []))).rejects.toMatchObject({ code: 'StaleVersion' });
      // Starts past the stored history, or ends elsewhere than the checkpoint says.
      await expect(store.commitStep('s1', step(1, 2, [user('x')]))).rejects.toMatchObject({ code: 'InvalidInput' });
      await expect(
        store.commitStep('s1', { ...step(1, 1, [user('x')]), checkpoint: head(1, 5) }),
      ).rejects.toMatchObject({ code: 'InvalidInput' });
      // A refused step changed nothing.
      expect(await store.load('s1')).toMatchObject({ version: 0, history: [user('a')] });
      await store.commitStep('s1', step(1, 1, [user('b')]));
      expect((await store.load('s1'))?.history).toEqual([user('a'), user('b')]);
    }),
  );

  it(
    'events store history references and load with the messages they refer to',
    withStore(async ({ store }) => {
      const summary: Message = { role: 'user', content: 'summary of a and b' };
      await store.commitStep(
        's1',
        step(
          0,
          0,
          [user('a'), user('b')],
          [
            {
              type: 'beforeModelCall',
              runId: 'r',
              seq: 0,
              turnIndex: 0,
              model: 'm',
              messages: { historyPrefix: 1, tail: [] },
            },
            {
              type: 'beforeModelCall',
              runId: 'r',
              seq: 1,
              turnIndex: 0,
              model: 'm',
              messages: { historyPrefix: 0, tail: [summary] },
            },
            { type: 'beforeModelCall', runId: 'r', seq: 2, turnIndex: 0, model: 'm', messages: [user('literal')] },
          ],
        ),
      );
      await store.commitStep(
        's1',
        step(
          1,
          2,
          [user('c')],
          [
            {
              type: 'agentEnd',
              runId: 'r',
              seq: 3,
              status: 'completed',
              endReason: 'naturalEnd',
              messages: { historyPrefix: 3, tail: [] },
              counters: zeroCounters(),
            },
          ],
        ),
      );
      const events = await store.loadEvents('s1');
      expect(events.map((e) => ('messages' in e ? e.messages : null))).toEqual([
        [user('a')],
        [summary],
        [user('literal')],
        [user('a'), user('b'), user('c')],
      ]);
      expect(Object.keys(events[3] ?? {})).toEqual([
        'type',
        'runId',
        'seq',
        'status',
        'endReason',
        'messages',
        'counters',
      ]);
    }),
  );

  it(
    'another handle on the same data sees every committed step, and its versions follow them',
    withStore(async ({ store, reopen }) => {
      for (let version = 0; version < 20; version++) {
        await store.commitStep(
          's1',
          step(
            version,
            version,
            [user(`m${version}`)],
            [{ type: 'turnStart', runId: 'r', seq: version, turnIndex: version }],
          ),
        );
      }
      const other = reopen();
      expect((await other.load('s1'))?.history).toHaveLength(20);
      expect(await other.loadEvents('s1', { from: 18 })).toHaveLength(2);
      await expect(other.commitStep('s1', step(19, 20, []))).rejects.toMatchObject({ code: 'StaleVersion' });
      await other.commitStep('s1', step(20, 20, [user('from the other handle')]));
      expect((await store.load('s1'))?.history.at(-1)).toEqual(user('from the other handle'));
    }),
  );

  it(
    'leases: one owner at a time, SessionBusy names the owner and the expiry, the same owner extends its lease',
    withStore(async ({ store, reopen }) => {
      const first = await store.acquire('s1', 'alpha', 30_000);
      // The stored version comes with the lease (-1: no session yet).
      expect(first).toEqual({ owner: 'alpha', token: 1, expiresAt: time + 30_000, version: -1 });
      const busy = reopen().acquire('s1', 'beta', 30_000);
      await expect(busy).rejects.toMatchObject({ name: 'AgentError', code: 'SessionBusy' });
      await expect(busy).rejects.toThrow(
        /session "s1" is busy: owner "alpha" holds its lease until 2023-11-14T22:13:50.000Z \(30.0 s from now\)/,
      );
      time += 10_000;
      expect(await store.acquire('s1', 'alpha', 30_000)).toEqual({
        owner: 'alpha',
        token: 1,
        expiresAt: time + 30_000,
        version: -1,
      });
      expect(await store.renew('s1', first, 5_000)).toEqual({ owner: 'alpha', token: 1, expiresAt: time + 5_000 });
      // Other sessions are not affected.
      expect((await store.acquire('s2', 'beta', 1_000)).token).toBe(1);
    }),
  );

  it(
    'after expiry another owner takes over with a larger token; the old token is fenced on commit and renew',
    withStore(async ({ store, reopen }) => {
      const old = await store.acquire('s1', 'alpha', 1_000);
      await store.commitStep('s1', { ...step(0, 0, [user('a')]), token: old.token });
      time += 1_001;
      const other = reopen();
      const taken = await other.acquire('s1', 'beta', 1_000);
      expect(taken).toMatchObject({ owner: 'beta', token: 2 });
      const fenced = store.commitStep('s1', { ...step(1, 1, [user('late')]), token: old.token });
      await expect(fenced).rejects.toMatchObject({ code: 'SessionLost' });
      await expect(fenced).rejects.toThrow(/lease token 1 was fenced by token 2 \(owner "beta"\)/);
      await expect(store.renew('s1', old, 1_000)).rejects.toMatchObject({ code: 'SessionLost' });
      await store.release('s1', old);
      await expect(store.acquire('s1', 'gamma', 1_000)).rejects.toMatchObject({ code: 'SessionBusy' });
      await other.commitStep('s1', { ...step(1, 1, [user('b')]), token: taken.token });
      expect((await other.load('s1'))?.history).toEqual([user('a'), user('b')]);
      // A lease that expired with nobody taking over may still be renewed by its owner.
      time += 5_000;
      expect(await other.renew('s1', taken, 1_000)).toEqual({ owner: 'beta', token: 2, expiresAt: time + 1_000 });
    }),
  );

  it(
    'release: another owner may acquire at once, with a larger token; delete keeps the token',
    withStore(async ({ store }) => {
      const first = await store.acquire('s1', 'alpha', 60_000);
      await store.commitStep('s1', { ...step(0, 0, [user('a')]), token: first.token });
      await store.release('s1', first);
      const second = await store.acquire('s1', 'beta', 60_000);
      expect(second.token).toBe(2);
      await store.delete('s1');
      await store.release('s1', second);
      expect((await store.acquire('s1', 'gamma', 60_000)).token).toBe(3);
      await expect(store.acquire('s1', 'delta', 0)).rejects.toMatchObject({ code: 'InvalidInput' });
    }),
  );

  it(
    "a live lease whose holder ran on this host and is gone is taken over at once; another host's, or a live holder's, waits for its ttl",
    withStore(async ({ store, reopen }) => {
      const here = thisProcess();
      if (!here) throw new Error('no process identity on this platform');
      const dead = await deadPid();
      const holders = {
        deadHere: { ...here, pid: dead },
        // The pid lives (it is ours) but started at another time: reused, so its owner is gone.
        reusedPid: { ...here, startedAt: (here.startedAt ?? 0) + 1 },
        deadElsewhere: { host: 'another-host', pid: dead },
        alive: here,
      };
      const acquired = await store.acquire('s1', 'crashed', 30_000, holders.deadHere);
      expect(acquired).toMatchObject({ owner: 'crashed', token: 1, holder: holders.deadHere });
      const taken = await reopen().acquire('s1', 'restarted', 30_000, here);
      expect(taken).toMatchObject({ owner: 'restarted', token: 2, holder: here });
      await store.acquire('s2', 'crashed', 30_000, holders.reusedPid);
      expect((await reopen().acquire('s2', 'restarted', 30_000, here)).token).toBe(2);
      await store.acquire('s3', 'elsewhere', 30_000, holders.deadElsewhere);
      await expect(reopen().acquire('s3', 'restarted', 30_000, here)).rejects.toMatchObject({ code: 'SessionBusy' });
      await store.acquire('s4', 'alive', 30_000, holders.alive);
      await expect(reopen().acquire('s4', 'other', 30_000, here)).rejects.toMatchObject({
        code: 'SessionBusy',
        message: expect.stringContaining(`process ${here.pid} on`),
      });
      // A lease without a holder (stored before holders existed) waits for its ttl too.
      await store.acquire('s5', 'old', 30_000);
      await expect(reopen().acquire('s5', 'new', 30_000, here)).rejects.toMatchObject({ code: 'SessionBusy' });
      time += 30_001;
      expect((await reopen().acquire('s3', 'restarted', 30_000, here)).token).toBe(2);
    }),
  );

  it(
    'sessions are independent',
    withStore(async ({ store }) => {
      await store.commitStep('a', step(0, 0, [user('in a')], [], 'a'));
      await store.commitStep('b', step(0, 0, [user('in b')], [], 'b'));
      await store.commitStep('a', step(1, 1, [user('more in a')], [], 'a'));
      expect((await store.load('b'))?.history).toEqual([user('in b')]);
      expect((await store.list()).map((s) => [s.sessionId, s.version]).sort()).toEqual([
        ['a', 1],
        ['b', 0],
      ]);
    }),
  );
}
