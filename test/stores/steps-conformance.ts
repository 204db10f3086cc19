import { expect, it } from 'vitest';
import { forkSession, type Message } from 'agentchart';
import { zeroCounters } from 'agentchart/model-kit';
import type { SessionHead, SessionStep, StepMachines, StoredEvent } from 'agentchart/store-kit';
import type { StoreUnderTest } from './conformance.js';

const user = (content: string): Message => ({ role: 'user', content });
const assistant = (text: string): Message => ({
  role: 'assistant',
  content: [{ type: 'text', text }],
  stopReason: 'stop',
});

/** A head that changes with the version: counters, queues and a run in flight every other step. */
function headAt(version: number, historyLength: number, sessionId: string): SessionHead {
  const counters = { ...zeroCounters(), turns: version, modelCalls: version * 2, failureCodes: { x: version % 3 } };
  return {
    sessionId,
    version,
    historyLength,
    steeringQueue: version % 4 === 1 ? [user(`steer ${version}`)] : [],
    followUpQueue: [],
    counters,
    turnIndex: version,
    run:
      version % 2 === 0
        ? {
            runId: `run${Math.floor(version / 10)}`,
            nextSeq: version,
            pending: [],
            turnsThisRun: version % 10,
            modelIndex: 0,
            turn: null,
          }
        : null,
  };
}

const machinesAt = (version: number): StepMachines => ({
  master: version % 2 === 0 ? { running: 'turn' } : null,
  turn: version % 2 === 0 ? { turnIndex: version, value: { TOOL_EXECUTION: 'running' }, status: 'active' } : null,
  calls: version % 2 === 0 ? [{ id: `c${version}`, name: 'read', value: 'executing', status: 'active' }] : [],
});

/** Events of step `version`: seq counts in its run (ten steps per run). */
const eventsAt = (version: number): StoredEvent[] => [
  { type: 'turnStart', runId: `run${Math.floor(version / 10)}`, seq: (version % 10) * 2, turnIndex: version },
  {
    type: 'turnEnd',
    runId: `run${Math.floor(version / 10)}`,
    seq: (version % 10) * 2 + 1,
    turnIndex: version,
    reason: 'complete',
    assistant: null,
    toolResults: [],
  },
];

interface Written {
  steps: SessionStep[];
  histories: Message[][];
}

/**
 * Writes `count` steps to `sessionId`: most append a message, every seventh replaces the last one
 * (a replaced assistant message), every thirteenth cuts two off (a discarded reply).
 */
async function writeSteps(
  store: StoreUnderTest['store'],
  sessionId: string,
  count: number,
  first = 0,
  history: Message[] = [],
): Promise<Written> {
  const written: Written = { steps: [], histories: [] };
  let current = [...history];
  for (let version = first; version < first + count; version++) {
    let from = current.length;
    let added: Message[] = [user(`m${version}`)];
    if (version % 13 === 12 && current.length >= 2) {
      from = current.length - 2;
      added = [];
    } else if (version % 7 === 6 && current.length >= 1) {
      from = current.length - 1;
      added = [assistant(`replacement ${version}`)];
    }
    current = [...current.slice(0, from), ...added];
    const step: SessionStep = {
      checkpoint: headAt(version, current.length, sessionId),
      history: { from, messages: added },
      events: eventsAt(version),
      machines: machinesAt(version),
    };
    await store.commitStep(sessionId, step);
    written.steps.push(step);
    written.histories.push(current);
  }
  return written;
}

/** The suite every store with step records passes: recovery of any step, fork, old and new handles. */
export function stepRecordsConformance(open: (now: () => number) => Promise<StoreUnderTest> | StoreUnderTest): void {
  const now = () => 1_700_000_000_000;
  const withStore = (body: (subject: StoreUnderTest) => Promise<void>) => async () => {
    const subject = await open(now);
    try {
      await body(subject);
    } finally {
      await subject.close();
    }
  };

  it(
    'every step is recoverable: its checkpoint, its history then (replaced messages put back) and the charts’ states',
    withStore(async ({ store }) => {
      const { steps, histories } = await writeSteps(store, 's1', 40);
      const listed = await store.steps!('s1');
      expect(listed.map((step) => step.version)).toEqual(steps.map((_, version) => version));
      expect(listed.map((step) => step.events)).toEqual(steps.map((_, version) => 2 * (version + 1)));
      expect(listed.map((step) => step.historyLength)).toEqual(histories.map((history) => history.length));
      for (const [version, step] of steps.entries()) {
        const at = await store.loadStep!('s1', version);
        const { historyLength: _length, ...head } = step.checkpoint;
        expect(at?.checkpoint).toEqual({ ...head, history: histories[version] });
        expect(at?.machines).toEqual(step.machines);
        expect(at).toMatchObject({ version, events: 2 * (version + 1), historyLength: histories[version]?.length });
      }
      // The events as stored, unparsed, for a viewer to pass on.
      const json = await store.loadEventsJson!('s1');
      expect(json.map((text) => JSON.parse(text))).toEqual(steps.flatMap((step) => step.events));
      expect((await store.loadEventsJson!('s1', { from: 78 })).map((text) => JSON.parse(text).seq)).toEqual([18, 19]);
      expect(await store.loadEventsJson!('nobody')).toEqual([]);
      expect(await store.loadStep!('s1', 40)).toBeNull();
      expect(await store.loadStep!('nobody', 0)).toBeNull();
      expect(await store.steps!('nobody')).toEqual([]);
      // The latest step is the session as load() gives it.
      expect((await store.loadStep!('s1', 39))?.checkpoint).toEqual(await store.load('s1'));
    }),
  );

  it(
    'long sessions: keyframes bound the chains, every step of 700 is still recovered exactly',
    withStore(async ({ store }) => {
      const { steps, histories } = await writeSteps(store, 'long', 700);
      for (const version of [0, 1, 255, 256, 257, 511, 512, 513, 600, 699]) {
        const at = await store.loadStep!('long', version);
        expect(at?.checkpoint.counters).toEqual(steps[version]?.checkpoint.counters);
        expect(at?.checkpoint.history).toEqual(histories[version]);
        expect(at?.machines).toEqual(steps[version]?.machines);
      }
    }),
  );

  it(
    'another handle continues the session: steps written by either are all recoverable',
    withStore(async ({ store, reopen }) => {
      const first = await writeSteps(store, 's1', 5);
      const other = reopen();
      const second = await writeSteps(other, 's1', 5, 5, first.histories.at(-1));
      const third = await writeSteps(store, 's1', 3, 10, second.histories.at(-1));
      const histories = [...first.histories, ...second.histories, ...third.histories];
      for (const handle of [store, other]) {
        for (let version = 0; version < 13; version++) {
          expect((await handle.loadStep!('s1', version))?.checkpoint.history).toEqual(histories[version]);
        }
      }
    }),
  );

  it(
    'fork: the new session is the step as it was (history, events, records); the original is untouched',
    withStore(async ({ store }) => {
      const { steps, histories } = await writeSteps(store, 's1', 30);
      const before = JSON.stringify(await store.loadEvents('s1'));
      const stepsBefore = await store.steps!('s1');
      await store.fork!('s1', 'f1', 19);
      const forked = await store.load('f1');
      const { historyLength: _length, ...head } = steps[19]!.checkpoint;
      expect(forked).toEqual({ ...head, sessionId: 'f1', history: histories[19] });
      expect(await store.loadEvents('f1')).toEqual((await store.loadEvents('s1')).slice(0, 40));
      expect((await store.steps!('f1')).map((step) => step.version)).toEqual([...Array(20).keys()]);
      for (const version of [0, 6, 12, 18, 19]) {
        const at = await store.loadStep!('f1', version);
        expect(at?.checkpoint.history).toEqual(histories[version]);
        expect(at?.checkpoint.sessionId).toBe('f1');
        expect(at?.machines).toEqual(steps[version]?.machines);
      }
      // The fork runs on its own versions; the original's log and steps are byte for byte what they were.
      const more = await writeSteps(store, 'f1', 3, 20, histories[19]);
      expect((await store.load('f1'))?.history).toEqual(more.histories.at(-1));
      expect(JSON.stringify(await store.loadEvents('s1'))).toBe(before);
      expect(await store.steps!('s1')).toEqual(stepsBefore);
      expect((await store.load('s1'))?.version).toBe(29);
      expect((await store.list()).map((summary) => summary.sessionId).sort()).toEqual(['f1', 's1']);
      // Refusals: an existing target, an unknown source, a step that does not exist.
      await expect(store.fork!('s1', 'f1', 3)).rejects.toMatchObject({ code: 'InvalidInput' });
      await expect(store.fork!('nobody', 'f2', 0)).rejects.toMatchObject({ code: 'SessionNotFound' });
      await expect(store.fork!('s1', 'f3', 99)).rejects.toMatchObject({ code: 'InvalidInput' });
      expect(await store.load('f3')).toBeNull();
      // Deleting the fork leaves the original; deleting a session removes its records.
      await store.delete('f1');
      expect(await store.steps!('f1')).toEqual([]);
      expect(await store.loadStep!('f1', 3)).toBeNull();
      expect((await store.loadStep!('s1', 3))?.checkpoint.history).toEqual(histories[3]);
    }),
  );

  it(
    'forkSession: at an event, the last step whose events end at or before it; runId when there are several runs',
    withStore(async ({ store }) => {
      const { steps } = await writeSteps(store, 's1', 25);
      // run1's events are those of steps 10..19 (seq 0..19): seq 7 is the second event of step 13.
      const atEnd = await forkSession(store, { from: 's1', to: 'a', atSeq: 7, runId: 'run1' });
      expect(atEnd).toEqual({
        sessionId: 'a',
        from: 's1',
        version: 13,
        events: 28,
        historyLength: steps[13]?.checkpoint.historyLength,
        lastEvent: { runId: 'run1', seq: 7 },
      });
      // seq 6 is the first of step 13's two events: the step before it (12) is the last checkpoint before it.
      const mid = await forkSession(store, { from: 's1', to: 'b', atSeq: 6, runId: 'run1' });
      expect(mid).toMatchObject({ version: 12, events: 26, lastEvent: { runId: 'run1', seq: 5 } });
      expect((await store.load('b'))?.counters.turns).toBe(12);
      // A step by its version; no atSeq: the latest step.
      expect(await forkSession(store, { from: 's1', to: 'v', version: 3 })).toMatchObject({ version: 3, events: 8 });
      await expect(forkSession(store, { from: 's1', to: 'w', version: 3, atSeq: 1 })).rejects.toMatchObject({
        code: 'InvalidInput',
      });
      await expect(forkSession(store, { from: 's1', to: 'w', version: 77 })).rejects.toThrow(/no recoverable step 77/);
      expect(await forkSession(store, { from: 's1', to: 'c' })).toMatchObject({ version: 24, events: 50 });
      await expect(forkSession(store, { from: 's1', to: 'd', atSeq: 3 })).rejects.toThrow(
        /has 3 runs \(run0, run1, run2\): name the one atSeq counts in with runId/,
      );
      await expect(forkSession(store, { from: 's1', to: 'd', atSeq: 99, runId: 'run1' })).rejects.toMatchObject({
        code: 'InvalidInput',
      });
      await expect(forkSession(store, { from: 'nobody', to: 'd' })).rejects.toMatchObject({ code: 'SessionNotFound' });
      await expect(forkSession(store, { from: 's1', to: 's1' })).rejects.toMatchObject({ code: 'InvalidInput' });
      await expect(forkSession(store, { from: 's1', to: 'e', atSeq: -1 })).rejects.toMatchObject({
        code: 'InvalidInput',
      });
      expect(await store.load('d')).toBeNull();
    }),
  );
}
