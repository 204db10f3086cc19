import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentError, createAgent, defineTool, memoryStore, type SessionStore } from 'agentchart';
import { postgresStore } from 'agentchart/postgres';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';
import { startPostgres, type PostgresServer } from '../support/postgres.js';
import { gate } from './support.js';
import {
  misuseHarness,
  studioWith,
  keep,
  post,
  postJson,
  get,
  rawRequest,
  approvalAgent,
  waitingForApproval,
  storedSession,
} from './hostile-support.js';

// The studio's API misused: controls, bodies, forks, time travel, and a store that fails under it.

misuseHarness();

describe('the control API, misused', () => {
  it('a body that is not JSON, not an object, or not sent as JSON is a 400 with a typed code', async () => {
    const agent = keep(createAgent({ model: scriptedModel([{ text: 'x' }]) }));
    const studio = await studioWith({ agents: [agent] });
    expect(await post(studio, '/api/control', '{"id": "live-1", "action": ')).toMatchObject({
      status: 400,
      body: { ok: false, code: 'BadRequest', message: 'the body is not valid JSON' },
    });
    expect(await post(studio, '/api/control', 'id=live-1', 'application/x-www-form-urlencoded')).toMatchObject({
      status: 400,
      body: { ok: false, code: 'BadRequest' },
    });
    for (const body of ['null', '[]', '42', '"prompt"', 'true']) {
      expect(await post(studio, '/api/control', body), body).toMatchObject({
        status: 400,
        body: { ok: false, code: 'InvalidInput' },
      });
      expect(await post(studio, '/api/fork', body), body).toMatchObject({
        status: 400,
        body: { ok: false, code: 'InvalidInput' },
      });
    }
    expect(await postJson(studio, '/api/control', { id: 7, action: 'abort' })).toMatchObject({
      status: 400,
      body: { ok: false, code: 'InvalidInput' },
    });
    expect(agent.running).toBe(false);
  });

  it('a session that does not exist is a 404 SessionNotFound, with or without a store', async () => {
    const studio = await studioWith({});
    expect(await postJson(studio, '/api/control', { id: 'nobody', action: 'abort' })).toMatchObject({
      status: 404,
      body: { ok: false, code: 'SessionNotFound' },
    });
    const stored = await studioWith({ store: memoryStore(), agentFor: () => ({ model: scriptedModel([]) }) });
    expect(await postJson(stored, '/api/control', { id: 'nobody', action: 'prompt', text: 'hi' })).toMatchObject({
      status: 404,
      body: { ok: false, code: 'SessionNotFound' },
    });
  });

  it('unknown actions and wrongly typed fields are refused with the API’s typed errors; the agent is untouched', async () => {
    const ran: unknown[] = [];
    const agent = approvalAgent('typed', ran);
    await agent.ready;
    const studio = await studioWith({ agents: [agent] });
    const control = (body: Record<string, unknown>) => postJson(studio, '/api/control', { id: 'typed', ...body });
    expect((await control({ action: 'launch' })).body).toMatchObject({ ok: false, code: 'InvalidInput' });
    expect((await control({})).body).toMatchObject({ ok: false, code: 'InvalidInput' });
    expect((await control({ action: 'prompt' })).body).toMatchObject({ ok: false, code: 'InvalidInput' });
    expect((await control({ action: 'prompt', text: { role: 'user' } })).body).toMatchObject({
      ok: false,
      code: 'InvalidInput',
    });
    expect((await control({ action: 'steer', text: '   ' })).body).toMatchObject({ ok: false, code: 'InvalidInput' });
    const run = agent.prompt('write a.txt');
    await expect.poll(() => agent.pendingApprovals().length).toBe(1);
    const { version } = agent.pendingApprovals()[0]!;
    const refusals = [
      [{ action: 'approve', toolCallId: 'w1' }, 'InvalidInput'],
      [{ action: 'approve', toolCallId: 'w1', version: String(version) }, 'InvalidInput'],
      [{ action: 'approve', toolCallId: 'w1', version: version + 0.5 }, 'InvalidInput'],
      [{ action: 'approve', version }, 'InvalidInput'],
      [{ action: 'approve', toolCallId: 'nope', version }, 'UnknownToolCall'],
      [{ action: 'approve', toolCallId: 'w1', version: version - 1 }, 'StaleVersion'],
      [{ action: 'approveWith', toolCallId: 'w1', version, arguments: 'path=b.txt' }, 'InvalidInput'],
      [{ action: 'approveWith', toolCallId: 'w1', version, arguments: ['b.txt'] }, 'InvalidInput'],
      [{ action: 'deny', toolCallId: 'w1', version, reason: { why: 'no' } }, 'InvalidInput'],
      [{ action: 'prompt', text: 'another' }, 'AlreadyRunning'],
    ] as const;
    for (const [body, code] of refusals) {
      expect((await control(body)).body, JSON.stringify(body)).toMatchObject({ ok: false, code });
    }
    // Still pending, at the same version: no refusal touched it.
    expect(agent.pendingApprovals()).toMatchObject([{ toolCallId: 'w1', version }]);
    expect((await control({ action: 'abort', reason: { not: 'text' } })).body).toEqual({ ok: true });
    const result = await run.result;
    expect(result).toMatchObject({ status: 'aborted', error: { message: '[object Object]' } });
    expect(ran).toEqual([]);
  });

  it('approveWith arguments that fail the tool’s schema: the tool never runs, the call is answered with an error', async () => {
    const { ran, studio, run, version } = await waitingForApproval('schema');
    const answer = await postJson(studio, '/api/control', {
      id: 'schema',
      action: 'approveWith',
      toolCallId: 'w1',
      version,
      arguments: { path: 42 },
    });
    expect(answer).toMatchObject({ status: 200, body: { ok: true, version } });
    const result = await run.result;
    expect(result.status).toBe('completed');
    expect(ran).toEqual([]);
    const results = result.messages.filter((message) => message.role === 'toolResult');
    expect(results).toMatchObject([{ toolCallId: 'w1', isError: true }]);
  });

  it('two pages approving the same approval at once: the tool runs exactly once, the other page is told why', async () => {
    const { ran, studio, run, version } = await waitingForApproval('twice');
    const approve = { id: 'twice', action: 'approve', toolCallId: 'w1', version };
    const answers = await Promise.all([
      postJson(studio, '/api/control', approve),
      postJson(studio, '/api/control', approve),
      postJson(studio, '/api/control', { ...approve, action: 'deny' }),
    ]);
    const accepted = answers.filter((answer) => answer.body.ok);
    expect(accepted).toHaveLength(1);
    for (const refused of answers.filter((answer) => !answer.body.ok)) {
      expect(refused.body.code).toMatch(/^(UnknownToolCall|StaleVersion)$/);
    }
    const result = await run.result;
    expect(result.status).toBe('completed');
    expect(ran.length + result.counters.approvalsDenied).toBe(1);
    expect(result.counters.approvalsRequested).toBe(1);
  });

  it('a closed agent is let go: controls find no session, nothing hangs', async () => {
    const agent = createAgent({ model: scriptedModel([{ text: 'x' }]) });
    const studio = await studioWith({ agents: [agent] });
    await agent.close();
    for (const action of ['prompt', 'steer', 'followUp', 'abort']) {
      expect(await postJson(studio, '/api/control', { id: 'live-1', action, text: 'hello' })).toMatchObject({
        status: 404,
        body: { ok: false, code: 'SessionNotFound' },
      });
    }
  });
});

describe('the request bodies, oversized', () => {
  it('a body far over the limit is refused with 413 and a clear body, and the server stops reading it', async () => {
    const studio = await studioWith({});
    const huge = JSON.stringify({ id: 'x', action: 'prompt', text: 'y'.repeat(3 << 20) });
    expect(await post(studio, '/api/control', huge)).toMatchObject({
      status: 413,
      body: { ok: false, code: 'BadRequest', message: expect.stringContaining('larger than') },
    });
  });

  it('a body streamed forever (chunked, no end) is cut off once over the limit: answered, and the socket closed', async () => {
    const studio = await studioWith({});
    const { socket, text, ended } = await rawRequest(
      studio,
      'POST /api/fork?token=TOKEN HTTP/1.1\r\nHost: HOST\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
    );
    const chunk = 'x'.repeat(64 << 10);
    const pump = setInterval(() => {
      for (let index = 0; index < 8 && !socket.destroyed; index++)
        socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    }, 1);
    await expect.poll(() => text(), { timeout: 5_000 }).toMatch(/^HTTP\/1\.1 413 /);
    const answered = performance.now();
    await ended;
    clearInterval(pump);
    expect(text()).toContain('the body is larger than 1048576 bytes');
    // The rest is read and dropped for a moment (the client reads its answer), then the connection is cut.
    expect(performance.now() - answered).toBeLessThan(3_000);
  });
});

describe('fork, misused', () => {
  it('a version out of range, negative, fractional or a string, a target that exists, a fork onto itself: typed refusals, nothing written', async () => {
    const store = memoryStore();
    await storedSession(store, 'kept');
    await storedSession(store, 'other');
    const studio = await studioWith({ store });
    const before = JSON.stringify(await store.loadEvents('kept'));
    const steps = (await store.steps!('kept')).map((step) => step.version);
    const refusals = [
      [{ id: 'kept', version: Math.max(...steps) + 100 }, 400, 'InvalidInput'],
      [{ id: 'kept', version: -1 }, 400, 'InvalidInput'],
      [{ id: 'kept', version: 1.5 }, 400, 'InvalidInput'],
      [{ id: 'kept', version: String(steps[0]) }, 400, 'InvalidInput'],
      [{ id: 'kept', version: steps[0], to: 'other' }, 400, 'InvalidInput'],
      [{ id: 'kept', version: steps[0], to: 'kept' }, 400, 'InvalidInput'],
      [{ id: 'kept', version: steps[0], to: 42 }, 400, 'InvalidInput'],
      [{ id: 'ghost', version: 0 }, 404, 'SessionNotFound'],
    ] as const;
    for (const [body, status, code] of refusals) {
      expect(await postJson(studio, '/api/fork', body), JSON.stringify(body)).toMatchObject({
        status,
        body: { ok: false, code },
      });
    }
    expect((await store.list()).map((summary) => summary.sessionId).sort()).toEqual(['kept', 'other']);
    expect(JSON.stringify(await store.loadEvents('kept'))).toBe(before);
    // Without a version: the latest step, and the new session's name says so.
    const latest = await postJson(studio, '/api/fork', { id: 'kept' });
    expect(latest).toMatchObject({ status: 200, body: { ok: true, fork: { version: Math.max(...steps) } } });
    expect((latest.body.fork as { sessionId: string }).sessionId).toMatch(/^kept-fork-latest-[0-9a-f]{6}$/);
  });

  it('a fork of a live session while it runs: the step as committed; the run goes on untouched and the fork runs', async () => {
    const store = memoryStore();
    const proceed = gate();
    const slow = defineTool({
      name: 'slow',
      description: 'waits',
      parameters: z.object({}),
      execute: async () => (await proceed.promise, 'slow done'),
    });
    const agent = keep(
      createAgent({
        model: scriptedModel([{ toolCalls: [{ id: 's1', name: 'slow', arguments: {} }] }, { text: 'finished' }]),
        tools: [slow],
        store,
        sessionId: 'busy',
      }),
    );
    await agent.ready;
    const studio = await studioWith({ agents: [agent], store });
    const run = agent.prompt('go');
    await expect.poll(async () => (await store.steps!('busy')).length).toBeGreaterThan(1);
    const version = (await store.steps!('busy')).at(-1)!.version;
    const forked = await postJson(studio, '/api/fork', { id: 'busy', version, to: 'busy-fork' });
    expect(forked).toMatchObject({ status: 200, body: { ok: true, fork: { sessionId: 'busy-fork', version } } });
    proceed.open();
    const result = await run.result;
    expect(result).toMatchObject({ status: 'completed', counters: { toolCallsExecuted: 1 } });
    // The fork loads and finishes the run it was forked in (its tool call resumed), then takes a prompt.
    const fork = keep(
      createAgent({
        model: scriptedModel([{ text: 'fork finished' }, { text: 'fork again' }]),
        tools: [slow],
        store,
        sessionId: 'busy-fork',
      }),
    );
    const { resumedRun } = await fork.ready;
    if (resumedRun) await resumedRun.result;
    expect((await fork.prompt('and now?').result).status).toBe('completed');
    expect(agent.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
  });
});

describe('two pages answering one approval, on a server store (the lease is taken back asynchronously)', () => {
  let server: PostgresServer | null = null;
  let skipped = '';
  beforeAll(async () => {
    const started = await startPostgres();
    if ('server' in started) server = started.server;
    else skipped = started.skipped;
  }, 60_000);
  afterAll(() => server?.stop());

  it('the tool runs exactly once; the page that came second is told it was already answered', async (context) => {
    if (!server) return context.skip(skipped);
    const store = postgresStore({ connectionString: server.connectionString });
    const { agent, ran, studio, run, version } = await waitingForApproval(`pg-twice-${process.pid}`, store);
    // Parked: the run let its lease go while it waits.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const approve = { id: `pg-twice-${process.pid}`, action: 'approve', toolCallId: 'w1', version };
    const answers = await Promise.all([
      postJson(studio, '/api/control', approve),
      postJson(studio, '/api/control', approve),
      postJson(studio, '/api/control', { ...approve, action: 'deny' }),
    ]);
    const result = await run.result;
    expect(result.status).toBe('completed');
    expect(ran.length + result.counters.approvalsDenied).toBe(1);
    expect(result.counters.approvalsRequested).toBe(1);
    expect(answers.filter((answer) => answer.body.ok)).toHaveLength(1);
    await agent.close();
    await store.close();
  }, 60_000);
});

describe('a store that fails under the API', () => {
  it('is the server’s failure, not the page’s: 503 StoreUnavailable, 500 StoreCorrupted, with the store’s message', async () => {
    const inner = memoryStore();
    await storedSession(inner, 'kept');
    let failure: AgentError | null = null;
    const failing = <T>(read: () => Promise<T>) => (failure ? Promise.reject(failure) : read());
    const store: SessionStore = {
      ...inner,
      list: () => failing(() => inner.list()),
      steps: (id) => failing(() => inner.steps!(id)),
    };
    const studio = await studioWith({ store });
    expect(await get(studio, '/api/steps?id=kept')).toMatchObject({ status: 200 });
    failure = new AgentError('StoreUnavailable', 'postgres store: connect ECONNREFUSED 127.0.0.1:5432');
    expect(await get(studio, '/api/sessions')).toEqual({
      status: 503,
      body: { ok: false, code: 'StoreUnavailable', message: 'postgres store: connect ECONNREFUSED 127.0.0.1:5432' },
    });
    failure = new AgentError('StoreCorrupted', 'session "kept": stored event 3 is not a JSON object');
    expect(await get(studio, '/api/steps?id=kept')).toMatchObject({ status: 500, body: { code: 'StoreCorrupted' } });
  });
});

describe('time travel, misused', () => {
  it('a step that is not a version (text, fractional, negative, huge, absent) or of a session with no store: a 4xx with a typed body', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentchart-hostile-'));
    const store = sqliteStore(join(dir, 'sessions.db'));
    await storedSession(store, 'kept');
    const plain = keep(createAgent({ model: scriptedModel([{ text: 'x' }]) }));
    const studio = await studioWith({ store, agents: [plain] });
    const first = (await store.steps('kept'))[0]!.version;
    expect(await get(studio, `/api/step?id=kept&version=${first}`)).toMatchObject({ status: 200 });
    for (const version of ['abc', '1.5', '-1', '1e400', '99999999999999999999', '', '0x1', ' 1']) {
      expect(await get(studio, `/api/step?id=kept&version=${encodeURIComponent(version)}`), version).toMatchObject({
        status: 400,
        body: { ok: false, code: 'InvalidInput' },
      });
    }
    // Absent is not step 0.
    expect(await get(studio, '/api/step?id=kept')).toMatchObject({ status: 400, body: { ok: false } });
    expect(await get(studio, '/api/step?id=kept&version=4000')).toMatchObject({ status: 404, body: { ok: false } });
    expect(await get(studio, `/api/step?id=live-1&version=0`)).toMatchObject({ status: 404, body: { ok: false } });
    expect(await get(studio, '/api/steps?id=live-1')).toMatchObject({ status: 200, body: null });
    await studio.stop();
    store.close();
  });
});
