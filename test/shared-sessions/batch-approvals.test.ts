import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type AgentEvent, type SessionStore } from 'agentchart';
import { zeroCounters } from 'agentchart/model-kit';
import { SessionHeadSchema } from 'agentchart/store-kit';
import { checkInvariants, scriptedModel } from 'agentchart/testing';

/**
 * A durable batch of three approvals: listed together by `pendingApprovals()`, each with the version it
 * was requested at, answered in any order from different handles (each answer takes the parked run over,
 * the run parks again while others wait), the run continuing after the last one. A stale answer is a
 * typed refusal; an abort answers every call.
 */

const IDS = ['a', 'b', 'c'];
const macrotasks = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A store that answers asynchronously, as a server store does (no sync methods). */
const serverLike = (): SessionStore => ({
  ...memoryStore(),
  commitStepSync: undefined,
  acquireSync: undefined,
  loadSync: undefined,
});

function setup(store: SessionStore) {
  const ran: string[] = [];
  const deploy = defineTool({
    name: 'deploy',
    description: 'Deploys (needs approval).',
    parameters: z.object({ region: z.string() }),
    requiresApproval: true,
    execute: ({ region }) => (ran.push(region), `deployed to ${region}`),
  });
  const model = () =>
    scriptedModel(
      (request) =>
        request.messages.some((m) => m.role === 'toolResult')
          ? { text: 'Done.' }
          : { toolCalls: IDS.map((id, i) => ({ id, name: 'deploy', arguments: { region: ['eu', 'us', 'ap'][i] } })) },
      { recordRequests: false },
    );
  const handle = async (owner: string) => {
    const agent = createAgent({ model: model(), tools: [deploy], store, sessionId: 'batch', lease: { owner } });
    await agent.ready;
    return agent;
  };
  return { store, ran, handle };
}

/** Until the run let its lease go (it parked): another owner can acquire the session. */
async function untilParked(store: SessionStore): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      await store.release('batch', await store.acquire('batch', 'probe', 1_000));
      return;
    } catch {
      await macrotasks();
    }
  }
  throw new Error('the run never parked');
}

const listed = (agent: { pendingApprovals(): Array<{ toolCallId: string; version: number }> }) =>
  agent.pendingApprovals().map(({ toolCallId, version }) => [toolCallId, version]);

describe('a durable batch of approvals', () => {
  it.each([
    ['an embedded store', memoryStore],
    ['a store that answers asynchronously', serverLike],
  ])(
    '%s: all three listed at once; answered c, a, b from three more handles; the run goes on after the last',
    async (_, make) => {
      const { store, ran, handle } = setup(make());
      const first = await handle('first');
      const run = first.prompt('Deploy everywhere.');
      for (let i = 0; i < 50 && first.pendingApprovals().length < 3; i++) await macrotasks();
      const [version] = first.pendingApprovals().map((pending) => pending.version);
      // Every call of the batch waits at once, in call order, each at the version it was requested at.
      expect(first.pendingApprovals()).toEqual(
        IDS.map((id, i) => ({
          toolCallId: id,
          toolName: 'deploy',
          arguments: { region: ['eu', 'us', 'ap'][i] },
          version,
        })),
      );
      await untilParked(store);

      const second = await handle('second');
      expect(listed(second)).toEqual(IDS.map((id) => [id, version]));
      const taken = second.resolveApproval('c', { approved: true }, { version: version as number });
      expect(taken.runId).toBe(run.runId);
      expect(await run.result).toMatchObject({ status: 'movedOn' });
      await untilParked(store);
      // The others still wait, at the versions they were requested at.
      expect(listed(second)).toEqual([
        ['a', version],
        ['b', version],
      ]);
      expect(ran).toEqual([]);

      const third = await handle('third');
      expect(listed(third)).toEqual([
        ['a', version],
        ['b', version],
      ]);
      const again = third.resolveApproval('a', { approved: true }, { version: version as number });
      expect(await taken.result).toMatchObject({ status: 'movedOn' });
      await untilParked(store);
      expect(listed(third)).toEqual([['b', version]]);

      // A handle per request, as a web server makes them: the fourth answers the last one and finishes the run.
      const fourth = await handle('fourth');
      expect(listed(fourth)).toEqual([['b', version]]);
      const last = fourth.resolveApproval(
        'b',
        { approved: false, reason: 'not the US' },
        { version: version as number },
      );
      const result = await last.result;
      expect(await again.result).toMatchObject({ status: 'movedOn' });
      expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
      expect(ran.sort()).toEqual(['ap', 'eu']);

      const stored = await store.loadEvents('batch');
      expect(checkInvariants(stored, fourth.messages).violations).toEqual([]);
      const approvals = stored.flatMap((event: AgentEvent) =>
        event.type === 'toolApprovalRequested'
          ? [`ask:${event.toolCallId}`]
          : event.type === 'toolApprovalResolved'
            ? [`${event.approved ? 'approved' : 'denied'}:${event.toolCallId}`]
            : [],
      );
      expect(approvals).toEqual(['ask:a', 'ask:b', 'ask:c', 'approved:c', 'approved:a', 'denied:b']);
      expect(fourth.messages.flatMap((m) => (m.role === 'toolResult' ? [[m.toolCallId, m.content]] : []))).toEqual([
        ['a', 'deployed to eu'],
        ['b', 'rejected: not the US'],
        ['c', 'deployed to ap'],
      ]);
      expect(result.counters).toMatchObject({
        toolCallsRequested: 3,
        toolCallsExecuted: 2,
        toolCallsRejected: 1,
        approvalsRequested: 3,
        approvalsDenied: 1,
        turns: 2,
        modelCalls: 2,
      });
      expect(fourth.pendingApprovals()).toEqual([]);
    },
  );

  it('a stale answer is refused, typed: a call another handle answered, and a version that is not the pending one', async () => {
    const { store, ran, handle } = setup(memoryStore());
    const first = await handle('first');
    const run = first.prompt('Deploy everywhere.');
    for (let i = 0; i < 50 && first.pendingApprovals().length < 3; i++) await macrotasks();
    await untilParked(store);
    const [{ version } = { version: -1 }] = first.pendingApprovals();
    const late = await handle('late');
    expect(listed(late)).toHaveLength(3);

    first.resolveApproval('a', { approved: true }, { version });
    for (let i = 0; i < 20 && listed(first).length > 2; i++) await macrotasks();
    await untilParked(store);
    // `late` loaded before `a` was answered: its answer to `a` is refused once it sees the session as it is.
    expect(() => late.resolveApproval('a', { approved: false }, { version })).toThrow(
      expect.objectContaining({ code: 'UnknownToolCall', message: expect.stringContaining('(pending: "b", "c")') }),
    );
    expect(() => late.resolveApproval('b', { approved: true }, { version: version + 1 })).toThrow(
      expect.objectContaining({ code: 'StaleVersion' }),
    );
    expect(listed(late)).toEqual([
      ['b', version],
      ['c', version],
    ]);
    expect(ran).toEqual([]);
    late.resolveApproval('b', { approved: true }, { version });
    const result = await late.resolveApproval('c', { approved: true }, { version }).result;
    expect(await run.result).toMatchObject({ status: 'movedOn' });
    expect(result).toMatchObject({ status: 'completed' });
    expect(ran.sort()).toEqual(['ap', 'eu', 'us']);
    expect(checkInvariants(await store.loadEvents('batch'), late.messages).violations).toEqual([]);
  });

  it('abort while two of three wait (parked): both withdrawn, every call answered, nothing left pending', async () => {
    const { store, ran, handle } = setup(memoryStore());
    const first = await handle('first');
    const run = first.prompt('Deploy everywhere.');
    for (let i = 0; i < 50 && first.pendingApprovals().length < 3; i++) await macrotasks();
    const [{ version } = { version: -1 }] = first.pendingApprovals();
    first.resolveApproval('b', { approved: true }, { version });
    await untilParked(store);
    expect(listed(first)).toEqual([
      ['a', version],
      ['c', version],
    ]);
    first.abort('changed my mind');
    const result = await run.result;
    expect(result).toMatchObject({ status: 'aborted', error: { message: 'changed my mind' } });
    expect(ran).toEqual([]);
    const stored = await store.loadEvents('batch');
    expect(checkInvariants(stored, first.messages).violations).toEqual([]);
    const resolved = stored.flatMap((event) =>
      event.type === 'toolApprovalResolved' ? [[event.toolCallId, event.approved]] : [],
    );
    expect(resolved).toEqual([
      ['b', true],
      ['a', false],
      ['c', false],
    ]);
    expect(
      first.messages.filter((m) => m.role === 'toolResult').map((m) => m.role === 'toolResult' && m.toolCallId),
    ).toEqual(IDS);
    expect(result.counters).toMatchObject({ approvalsRequested: 3, approvalsDenied: 2, toolCallsExecuted: 0 });
    expect(first.pendingApprovals()).toEqual([]);
    expect((await store.load('batch'))?.run).toBeNull();
  });
});

describe('a durable batch answered in one go by the handle that parked it', () => {
  it.each([
    ['an embedded store', memoryStore],
    ['a store that answers asynchronously', serverLike],
  ])(
    '%s: three answers back to back (approve all but one): each decided once, the run goes on here',
    async (_, make) => {
      const { store, ran, handle } = setup(make());
      const agent = await handle('only');
      const run = agent.prompt('Deploy everywhere.');
      for (let i = 0; i < 50 && agent.pendingApprovals().length < 3; i++) await macrotasks();
      await untilParked(store);
      const [{ version } = { version: -1 }] = agent.pendingApprovals();
      // The lease is still on its way back when the second and third answers come (a server store).
      const answers = [
        ['c', { approved: true }],
        ['a', { approved: true }],
        ['b', { approved: false }],
      ] as const;
      for (const [id, decision] of answers)
        expect(agent.resolveApproval(id, decision, { version }).runId).toBe(run.runId);
      const result = await run.result;
      expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
      expect(ran.sort()).toEqual(['ap', 'eu']);
      const stored = await store.loadEvents('batch');
      expect(checkInvariants(stored, agent.messages).violations).toEqual([]);
      expect(
        stored.flatMap((event) => (event.type === 'toolApprovalResolved' ? [[event.toolCallId, event.approved]] : [])),
      ).toEqual([
        ['c', true],
        ['a', true],
        ['b', false],
      ]);
      expect(result.counters).toMatchObject({ approvalsRequested: 3, approvalsDenied: 1, toolCallsExecuted: 2 });
    },
  );
});

describe('sessions stored before batches were asked together', () => {
  it('a turn stored with its one pendingApproval reads as the list of it; a new one as its list', () => {
    const pending = { toolCallId: 'd1', toolName: 'deploy', arguments: { region: 'eu' }, version: 3 };
    const turn = {
      turnIndex: 0,
      reply: null,
      results: [],
      started: [],
      approved: [],
      requested: ['d1'],
      committed: false,
    };
    const head = (stored: object) => ({
      sessionId: 's',
      version: 4,
      historyLength: 0,
      steeringQueue: [],
      followUpQueue: [],
      counters: zeroCounters(),
      turnIndex: 0,
      run: { runId: 'r', nextSeq: 9, pending: [], turnsThisRun: 0, modelIndex: 0, turn: { ...turn, ...stored } },
    });
    expect(SessionHeadSchema.parse(head({ pendingApproval: pending })).run?.turn?.pendingApprovals).toEqual([pending]);
    expect(SessionHeadSchema.parse(head({ pendingApproval: null })).run?.turn?.pendingApprovals).toEqual([]);
    const two = [pending, { ...pending, toolCallId: 'd2' }];
    expect(SessionHeadSchema.parse(head({ pendingApprovals: two })).run?.turn?.pendingApprovals).toEqual(two);
    expect(SessionHeadSchema.parse(head({ pendingApprovals: two })).run?.turn).not.toHaveProperty('pendingApproval');
  });
});
