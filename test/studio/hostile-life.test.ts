import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentError, createAgent, defineTool, memoryStore, type Agent, type SessionStore } from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { startStudio, type Studio } from 'agentchart/studio';
import { scriptedModel } from 'agentchart/testing';
import { StoredFeed } from '../../src/studio/stored-feed.js';
import { StreamClient } from '../../src/studio/stream-client.js';
import { gate } from './support.js';
import { misuseHarness, studioWith, keep, postJson, get, rawRequest, storedSession } from './hostile-support.js';

// Pages and agents that come and go under the studio: streams, attach and stop, agents it opens, stores that fail.

misuseHarness();

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
