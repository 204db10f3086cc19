import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createNetServer, connect as tcpConnect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentError, createAgent, defineTool, memoryStore, type Agent, type SessionStore } from 'agentchart';
import { postgresStore } from 'agentchart/postgres';
import { sqliteStore } from 'agentchart/sqlite';
import { startStudio, type Studio } from 'agentchart/studio';
import { scriptedModel } from 'agentchart/testing';
import { runCli, type CliIo } from '../../src/cli/commands.js';
import { StoredFeed } from '../../src/studio/stored-feed.js';
import { StreamClient } from '../../src/studio/stream-client.js';
import { startPostgres, type PostgresServer } from '../support/postgres.js';
import { gate } from './support.js';

/**
 * The studio as real users and hostile pages misuse it: malformed and oversized bodies, wrong types,
 * unknown sessions and calls, races between pages, pages that come and go, agents that close under
 * it. Every misuse gets a typed error or a clear HTTP error body; nothing takes the process down
 * (an uncaught exception or an unhandled rejection is a failure of the test that caused it).
 */

const studios: Studio[] = [];
const agents: Agent[] = [];
const crashes: unknown[] = [];
const onCrash = (error: unknown) => crashes.push(error);
beforeEach(() => {
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
});
afterEach(async () => {
  for (const studio of studios.splice(0)) await studio.stop();
  for (const agent of agents.splice(0)) await agent.close();
  // A crash of a timer or a callback may land a tick late.
  await new Promise((resolve) => setTimeout(resolve, 20));
  process.off('uncaughtException', onCrash);
  process.off('unhandledRejection', onCrash);
  expect(crashes.splice(0)).toEqual([]);
});

async function studioWith(options: Parameters<typeof startStudio>[0]): Promise<Studio> {
  const studio = await startStudio(options);
  studios.push(studio);
  return studio;
}

const keep = (agent: Agent): Agent => (agents.push(agent), agent);

interface Answer {
  status: number;
  body: { ok?: boolean; code?: string; message?: string; [key: string]: unknown };
}

/** A POST with this raw body (JSON content type unless told otherwise). */
async function post(studio: Studio, path: string, body: string, contentType = 'application/json'): Promise<Answer> {
  const url = new URL(path, studio.url);
  url.searchParams.set('token', new URL(studio.url).searchParams.get('token') ?? '');
  const response = await fetch(url, { method: 'POST', body, headers: { 'content-type': contentType } });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

const postJson = (studio: Studio, path: string, value: unknown) => post(studio, path, JSON.stringify(value));

async function get(studio: Studio, path: string): Promise<Answer> {
  const url = new URL(path, studio.url);
  url.searchParams.set('token', new URL(studio.url).searchParams.get('token') ?? '');
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

/** A raw socket that sent its request line and headers: the test writes (or stops writing) the rest. */
async function rawRequest(
  studio: Studio,
  head: string,
): Promise<{ socket: Socket; text: () => string; ended: Promise<void> }> {
  const url = new URL(studio.url);
  const socket = tcpConnect(Number(url.port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  socket.on('error', () => {});
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(head.replaceAll('TOKEN', url.searchParams.get('token') ?? '').replaceAll('HOST', url.host));
  return { socket, text: () => text, ended };
}

function approvalAgent(sessionId: string, ran: unknown[], store: SessionStore = memoryStore()) {
  const writeFile = defineTool({
    name: 'write_file',
    description: 'writes a file',
    parameters: z.object({ path: z.string(), text: z.string() }),
    requiresApproval: true,
    execute: (args) => (ran.push(args), `wrote ${args.path}`),
  });
  return keep(
    createAgent({
      model: scriptedModel([
        { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'a.txt', text: 'draft' } }] },
        { text: 'written' },
      ]),
      tools: [writeFile],
      store,
      sessionId,
    }),
  );
}

/** An agent whose write waits for an approval, shown in a studio: what its pages answer. */
async function waitingForApproval(sessionId: string, store?: SessionStore) {
  const ran: unknown[] = [];
  const agent = approvalAgent(sessionId, ran, store);
  await agent.ready;
  const studio = await studioWith({ agents: [agent] });
  const run = agent.prompt('write a.txt');
  await expect.poll(() => agent.pendingApprovals().length, { timeout: 10_000 }).toBe(1);
  return { agent, ran, studio, run, version: agent.pendingApprovals()[0]!.version };
}

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

/** A stored session of two runs (several steps), in a store the studio shows. */
async function storedSession(store: SessionStore, sessionId: string): Promise<void> {
  const agent = createAgent({ model: scriptedModel([{ text: 'one' }, { text: 'two' }]), store, sessionId });
  await agent.ready;
  await agent.prompt('first').result;
  await agent.prompt('second').result;
  await agent.close();
}

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

/** Opens a session's stream and hangs up as soon as `hangUp` says (at once: before any byte is read). */
async function openAndHangUp(studio: Studio, id: string, hangUp: 'at once' | 'after the first bytes') {
  const { socket, text } = await rawRequest(
    studio,
    `GET /api/stream?id=${encodeURIComponent(id)}&token=TOKEN HTTP/1.1\r\nHost: HOST\r\n\r\n`,
  );
  if (hangUp === 'after the first bytes') await expect.poll(() => text().length).toBeGreaterThan(0);
  socket.destroy();
}

/** The last chunk of a chunked response: the server ended the stream. */
const STREAM_END = /\r\n0\r\n\r\n$/;

const timers = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;

describe('the stream, misused', () => {
  it('an id that does not exist, or none: a 404 with a typed body, no stream left open', async () => {
    const studio = await studioWith({ store: memoryStore() });
    expect(await get(studio, '/api/stream?id=ghost')).toMatchObject({
      status: 404,
      body: { ok: false, code: 'SessionNotFound' },
    });
    expect(await get(studio, '/api/stream')).toMatchObject({ status: 404, body: { ok: false } });
    expect(studio.stats().clients).toEqual([]);
  });

  it('pages opening and hanging up fast on a live session leave no client, timer or listener behind', async () => {
    const agent = keep(createAgent({ model: scriptedModel([{ text: 'a reply' }]) }));
    const studio = await studioWith({ agents: [agent] });
    const idle = timers();
    await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        openAndHangUp(studio, 'live-1', index % 2 ? 'at once' : 'after the first bytes'),
      ),
    );
    await expect.poll(() => studio.stats().clients.length).toBe(0);
    // A run with no page reading: nothing is scheduled for pages.
    await agent.prompt('hi').result;
    await expect.poll(timers).toBeLessThanOrEqual(idle);
  });

  it('pages hanging up on a stored session while the studio still looks it up leave no client or poll behind', async () => {
    const inner = memoryStore();
    await storedSession(inner, 'kept');
    // A store that answers slowly (a server over the network): pages hang up before it answers.
    const store: SessionStore = {
      ...inner,
      list: async () => (await new Promise((resolve) => setTimeout(resolve, 100)), inner.list()),
    };
    const studio = await studioWith({ store });
    const idle = timers();
    await Promise.all(Array.from({ length: 10 }, () => openAndHangUp(studio, 'kept', 'at once')));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(studio.stats().clients).toEqual([]);
    // No page reads it: the stored session is not polled every second.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(timers()).toBeLessThanOrEqual(idle);
    // A page that stays gets the session.
    const { socket, text } = await rawRequest(
      studio,
      `GET /api/stream?id=kept&token=TOKEN HTTP/1.1\r\nHost: HOST\r\n\r\n`,
    );
    await expect.poll(() => text()).toContain('"hello"');
    expect(studio.stats().clients).toHaveLength(1);
    socket.destroy();
    await expect.poll(() => studio.stats().clients.length).toBe(0);
  });
});

describe('the studio’s life, misused', () => {
  it('attach twice, attach a stranger, attach after stop, stop twice: the same key, typed refusals, no subscription left', async () => {
    const store = memoryStore();
    const agent = keep(createAgent({ model: scriptedModel([{ text: 'x' }]), store, sessionId: 'one' }));
    const twin = keep(createAgent({ model: scriptedModel([{ text: 'x' }]), store, sessionId: 'one' }));
    const studio = await startStudio({});
    expect(studio.attach(agent)).toBe('one');
    expect(studio.attach(agent)).toBe('one');
    expect(() => studio.attach(twin)).toThrow(expect.objectContaining({ name: 'AgentError', code: 'InvalidInput' }));
    expect(() => studio.attach({} as Agent)).toThrow(expect.objectContaining({ code: 'InvalidInput' }));
    const stopping = studio.stop();
    expect(studio.stop()).toBe(stopping);
    await stopping;
    const late = keep(createAgent({ model: scriptedModel([{ text: 'x' }]) }));
    expect(() => studio.attach(late)).toThrow(expect.objectContaining({ name: 'AgentError', code: 'Closed' }));
    await studio.stop();
  });

  it('an agent closed while a page watches: the studio lets it go, its page reads the session again as stored', async () => {
    const proceed = gate();
    const slow = defineTool({
      name: 'slow',
      description: 'waits',
      parameters: z.object({}),
      execute: async (_arguments, { signal }) =>
        await new Promise<string>((resolve, reject) => {
          void proceed.promise.then(() => resolve('done'));
          signal?.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    });
    const store = memoryStore();
    const agent = createAgent({
      model: scriptedModel([{ toolCalls: [{ id: 's1', name: 'slow', arguments: {} }] }, { text: 'finished' }]),
      tools: [slow],
      store,
      sessionId: 'closing',
    });
    await agent.ready;
    const studio = await studioWith({ agents: [agent] });
    const watching = await rawRequest(studio, `GET /api/stream?id=closing&token=TOKEN HTTP/1.1\r\nHost: HOST\r\n\r\n`);
    await expect.poll(() => watching.text()).toContain('"hello"');
    void agent.prompt('go');
    await expect.poll(() => watching.text()).toContain('"toolExecutionStart"');
    await agent.close();
    // Its stream ends (an EventSource reconnects), and the session is listed as stored, read-only.
    await expect.poll(() => watching.text()).toMatch(STREAM_END);
    await expect.poll(() => studio.stats().clients).toEqual([]);
    expect((await get(studio, '/api/sessions')).body).toMatchObject([
      { id: 'closing', live: false, stored: true, controllable: false },
    ]);
    expect(
      (await postJson(studio, '/api/control', { id: 'closing', action: 'prompt', text: 'again' })).body,
    ).toMatchObject({ ok: false, code: 'NotReady' });
    const again = await rawRequest(studio, `GET /api/stream?id=closing&token=TOKEN HTTP/1.1\r\nHost: HOST\r\n\r\n`);
    await expect.poll(() => again.text()).toContain('"toolExecutionStart"');
    again.socket.destroy();
  });

  it('agents attached and closed one after another (an app attaching each session it serves): none is kept', async () => {
    const studio = await studioWith({});
    for (let index = 0; index < 50; index++) {
      const agent = createAgent({ model: scriptedModel([{ text: `reply ${index}` }]) });
      const id = studio.attach(agent);
      const page = await rawRequest(studio, `GET /api/stream?id=${id}&token=TOKEN HTTP/1.1\r\nHost: HOST\r\n\r\n`);
      await agent.prompt('hi').result;
      await agent.close();
      await expect.poll(() => page.text()).toMatch(STREAM_END);
      page.socket.destroy();
    }
    expect((await get(studio, '/api/sessions')).body).toEqual([]);
    expect(studio.stats().clients).toEqual([]);
  });
});

/** A memory store that counts the agents open on it (the hook an embedded store uses to know its agents). */
function countingStore(): SessionStore & { open: () => number } {
  const inner = memoryStore();
  let open = 0;
  return {
    ...inner,
    attach: () => {
      open++;
      let detached = false;
      return () => {
        if (!detached) open--;
        detached = true;
      };
    },
    open: () => open,
  };
}

describe('agents the studio opens itself (agentFor), misused', () => {
  it('two pages prompting a stored session at once: one agent is opened, one run starts, the other page is told', async () => {
    const store = countingStore();
    await storedSession(store, 'kept');
    let opened = 0;
    const studio = await studioWith({
      store,
      agentFor: async () => {
        opened++;
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { model: scriptedModel([{ text: 'answered' }]) };
      },
    });
    const answers = await Promise.all(
      ['a', 'b', 'c'].map((text) => postJson(studio, '/api/control', { id: 'kept', action: 'prompt', text })),
    );
    expect(opened).toBe(1);
    expect(answers.filter((answer) => answer.body.ok)).toHaveLength(1);
    for (const refused of answers.filter((answer) => !answer.body.ok))
      expect(refused.body).toMatchObject({ ok: false, code: 'AlreadyRunning' });
    expect(store.open()).toBe(1);
    await studio.stop();
    expect(store.open()).toBe(0);
  });

  it('the studio stopped while it opens an agent: that agent is closed, none is left open', async () => {
    const store = countingStore();
    await storedSession(store, 'kept');
    const release = gate();
    const asked = gate();
    const studio = await startStudio({
      store,
      agentFor: async () => {
        asked.open();
        await release.promise;
        return { model: scriptedModel([{ text: 'answered' }]) };
      },
    });
    const answer = postJson(studio, '/api/control', { id: 'kept', action: 'prompt', text: 'hi' }).catch(
      (error: unknown) => error,
    );
    await asked.promise;
    const stopped = studio.stop();
    release.open();
    await stopped;
    await answer;
    await expect.poll(() => store.open()).toBe(0);
  });

  it('agentFor that throws, or returns options createAgent refuses: a clear error body, no agent left open', async () => {
    const store = countingStore();
    await storedSession(store, 'kept');
    await storedSession(store, 'odd');
    const studio = await studioWith({
      store,
      agentFor: (id) => {
        if (id === 'kept') throw new Error('no model configured for kept');
        return { model: 'not a model' } as never;
      },
    });
    expect(await postJson(studio, '/api/control', { id: 'kept', action: 'prompt', text: 'hi' })).toMatchObject({
      status: 500,
      body: { ok: false, code: 'InternalError', message: 'no model configured for kept' },
    });
    expect(await postJson(studio, '/api/control', { id: 'odd', action: 'prompt', text: 'hi' })).toMatchObject({
      status: 400,
      body: { ok: false, code: 'InvalidOptions' },
    });
    expect(store.open()).toBe(0);
  });
});

/** A response a StreamClient writes to, keeping what it was sent (the stored feed's pages, without a socket). */
class RecordedResponse extends EventEmitter {
  written: string[] = [];
  ended = false;
  writableLength = 0;
  write(text: string): boolean {
    this.written.push(text);
    return true;
  }
  end(): void {
    this.ended = true;
    this.emit('close');
  }
}

describe('a stored session whose store fails under its pages', () => {
  it('a page catching up after it fell behind, when the store fails: it is told and its stream ends (no unhandled rejection)', async () => {
    const inner = memoryStore();
    await storedSession(inner, 'kept');
    let failing = false;
    const broken = () => Promise.reject(new AgentError('StoreUnavailable', 'the store went away'));
    const store: SessionStore = {
      ...inner,
      steps: (id) => (failing ? broken() : inner.steps!(id)),
      load: (id) => (failing ? broken() : inner.load(id)),
    };
    const feed = new StoredFeed('kept', store, () => ({
      id: 'kept',
      label: 'kept',
      live: false,
      stored: true,
      running: false,
      controllable: false,
      version: null,
      updatedAt: null,
    }));
    const response = new RecordedResponse();
    const client = new StreamClient('kept', response as never, (caughtUp) => feed.resync(caughtUp));
    feed.join(client);
    await expect.poll(() => response.written.length).toBe(1);
    expect(response.written[0]).toContain('"hello"');
    failing = true;
    feed.resync(client);
    await expect.poll(() => response.ended).toBe(true);
    expect(response.written.at(-1)).toBe('data: {"error":"the store went away"}\n\n');
    feed.close();
  });
});

describe('a SQLite file damaged under a running agent the studio opened', () => {
  it('overwritten while the run waits on a tool: its page sees the run end, every answer is JSON, a new page gets the session or the error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentchart-hostile-'));
    const path = join(dir, 'sessions.db');
    const store = sqliteStore(path);
    await storedSession(store, 'kept');
    const proceed = gate();
    const started = gate();
    const slow = defineTool({
      name: 'slow',
      description: 'waits',
      parameters: z.object({}),
      execute: async () => (started.open(), await proceed.promise, 'slow done'),
    });
    const studio = await studioWith({
      store,
      agentFor: () => ({
        model: scriptedModel([{ toolCalls: [{ id: 's1', name: 'slow', arguments: {} }] }, { text: 'finished' }]),
        tools: [slow],
      }),
    });
    const prompted = await postJson(studio, '/api/control', { id: 'kept', action: 'prompt', text: 'go' });
    expect(prompted.body).toMatchObject({ ok: true });
    await started.promise;
    // A page watches the agent the studio opened.
    const watching = await rawRequest(studio, `GET /api/stream?id=kept&token=TOKEN HTTP/1.1\r\nHost: HOST\r\n\r\n`);
    await expect.poll(() => watching.text()).toContain('"hello"');
    for (const file of [path, `${path}-wal`]) writeFileSync(file, randomBytes(64 << 10));
    proceed.open();
    await expect.poll(() => watching.text()).toContain('"running":false');
    // Each answer is JSON: the session as the agent holds it, or the store's failure, typed.
    for (const answer of [
      await get(studio, '/api/sessions'),
      await get(studio, '/api/steps?id=kept'),
      await postJson(studio, '/api/control', { id: 'kept', action: 'prompt', text: 'again' }),
    ]) {
      if (answer.status !== 200) expect(answer.body).toMatchObject({ ok: false, code: expect.any(String) });
    }
    // A page opening now gets the session or what went wrong: never a stream left hanging without either.
    const late = await rawRequest(studio, `GET /api/stream?id=kept&token=TOKEN HTTP/1.1\r\nHost: HOST\r\n\r\n`);
    await expect.poll(() => late.text()).toMatch(/data: \{"(hello|error)"/);
    watching.socket.destroy();
    late.socket.destroy();
    await studio.stop();
    store.close();
  });
});

async function cli(argv: string[], io: Partial<CliIo> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const status = await runCli(['studio', ...argv], {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    stopped: new Promise(() => {}),
    ...io,
  });
  return { status, out: out.join('\n'), err: err.join('\n') };
}

/** A port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('agentchart studio, misused', () => {
  it('a file that is not a store, a directory, a pipe: one clear line and exit 1, never a stack', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentchart-hostile-cli-'));
    const text = join(dir, 'notes.db');
    writeFileSync(text, 'these are my notes, not a database\n');
    const pipe = join(dir, 'pipe.db');
    execFileSync('mkfifo', [pipe]);
    expect(await cli(['--store', text])).toEqual({
      status: 1,
      out: '',
      err: expect.stringMatching(
        /^agentchart studio: StoreCorrupted: session store ".*notes\.db" is corrupted or not a database/,
      ),
    });
    for (const path of [dir, pipe]) {
      const answer = await cli(['--store', path]);
      expect(answer, path).toMatchObject({ status: 1, out: '' });
      expect(answer.err).toMatch(/^agentchart studio: StoreUnavailable: session store ".*" cannot be opened/);
      expect(answer.err).not.toMatch(/\n\s+at /);
    }
  });

  it('--postgres with something that is not a postgres:// URL is a usage error, not a connection to a host named after it', async () => {
    for (const given of ['not-a-url', 'localhost:5432/db', 'http://127.0.0.1:5432/db', '/var/run/postgresql']) {
      expect(await cli(['--postgres', given]), given).toMatchObject({
        status: 2,
        err: expect.stringContaining(`--postgres needs a postgres:// URL`),
      });
    }
  });

  it('--postgres on a port nothing listens on, or a server that never answers: a clear line and exit 1, no hang', async () => {
    const refused = await cli(['--postgres', `postgres://agent@127.0.0.1:${await closedPort()}/db`]);
    expect(refused).toEqual({
      status: 1,
      out: '',
      err: expect.stringMatching(/^agentchart studio: StoreUnavailable: postgres store: connect ECONNREFUSED/),
    });
    // A server that takes the connection and says nothing (a wrong port, a stuck proxy).
    const silent = createNetServer((socket) => socket.on('data', () => {}));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const started = performance.now();
    const waited = await cli(['--postgres', `postgres://agent@127.0.0.1:${port}/db`], { connectTimeoutMs: 300 });
    expect(waited).toEqual({
      status: 1,
      out: '',
      err: expect.stringMatching(/^agentchart studio: StoreUnavailable: postgres store: .*timeout/),
    });
    expect(performance.now() - started).toBeLessThan(10_000);
    silent.close();
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
