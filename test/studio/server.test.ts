import { connect as tcpConnect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type Agent } from 'agentchart';
import { startStudio, type Studio } from 'agentchart/studio';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { httpRequest, withToken } from '../support/local-endpoint.js';
import type { Hello, SessionInfo, StreamMessage } from '../../src/studio/protocol.js';
import { chattyAgent, STALLED_PAGE_BOUND } from './chatty.js';
import { CLIENT_BUFFER_LIMIT } from '../../src/studio/stream-client.js';

/** The studio's server without a browser: its guard, its API, and a reader that stops reading. */

const studios: Studio[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const studio of studios.splice(0)) await studio.stop();
  for (const agent of agents.splice(0)) await agent.close();
});

async function studioWith(options: Parameters<typeof startStudio>[0]): Promise<Studio> {
  const studio = await startStudio(options);
  studios.push(studio);
  return studio;
}

const api = async <T>(studio: Studio, path: string, body?: unknown): Promise<T> => {
  const url = new URL(path, studio.url);
  url.searchParams.set('token', new URL(studio.url).searchParams.get('token') ?? '');
  const response = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  return (await response.json()) as T;
};

/** Reads a session's stream until `until` says enough; returns what it read. */
async function readStream(studio: Studio, id: string, until: (messages: StreamMessage[]) => boolean) {
  const url = new URL(`/api/stream?id=${encodeURIComponent(id)}`, studio.url);
  url.searchParams.set('token', new URL(studio.url).searchParams.get('token') ?? '');
  const controller = new AbortController();
  const response = await fetch(url, { signal: controller.signal });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const messages: StreamMessage[] = [];
  let buffer = '';
  while (!until(messages)) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      messages.push(JSON.parse(buffer.slice(6, end)) as StreamMessage);
      buffer = buffer.slice(end + 2);
    }
  }
  controller.abort();
  return messages;
}

describe('the studio server', () => {
  it('listens on loopback with a per-start token: without it 401 and no content; foreign Host or Origin 403; never CORS', async () => {
    const studio = await studioWith({});
    const other = await studioWith({});
    const url = new URL(studio.url);
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.searchParams.get('token')).toMatch(/^[0-9a-f]{64}$/);
    expect(url.searchParams.get('token')).not.toBe(new URL(other.url).searchParams.get('token'));
    const host = { host: url.host };
    for (const path of ['/', '/api/sessions', '/api/stream?id=x', '/api/step?id=x&version=0']) {
      const target = new URL(path, studio.url).href;
      const refused = await httpRequest(target, host);
      expect(refused).toMatchObject({ status: 401, body: '', corsHeaders: [] });
      const wrong = await httpRequest(withToken(target, new URL(other.url).searchParams.get('token')), host);
      expect(wrong.status).toBe(401);
    }
    const page = withToken(new URL('/', studio.url).href, url.searchParams.get('token'));
    expect(await httpRequest(page, { host: `attacker.example:${url.port}` })).toMatchObject({ status: 403, body: '' });
    expect(await httpRequest(page, { ...host, origin: 'null' })).toMatchObject({ status: 403, body: '' });
    expect(await httpRequest(page, { ...host, origin: 'http://evil.example' })).toMatchObject({ status: 403 });
    const preflight = await httpRequest(page, { ...host, origin: 'http://evil.example' }, 'OPTIONS');
    expect(preflight).toMatchObject({ status: 403, corsHeaders: [] });
    const served = await httpRequest(page, { ...host, origin: `http://127.0.0.1:${url.port}` });
    expect(served.status).toBe(200);
    expect(served.corsHeaders).toEqual([]);
    expect(served.headers['content-security-policy']).toContain("default-src 'none'");
    expect(served.body).toContain('<title>agentchart studio</title>');
    // The page fetches nothing from elsewhere: no src/href attribute, everything inline.
    expect(served.body).not.toMatch(/<(script|link|img|iframe)[^>]+(src|href)="(?!data:)/i);
    // A control posted from another origin never reaches the agent.
    const post = await httpRequest(
      withToken(new URL('/api/control', studio.url).href, url.searchParams.get('token')),
      {
        ...host,
        origin: 'http://evil.example',
        'content-type': 'application/json',
      },
      'POST',
    );
    expect(post.status).toBe(403);
  });

  it('lists live agents and stored sessions; a stream starts with the session and follows the run', async () => {
    const store = memoryStore();
    const stored = createAgent({ model: scriptedModel([{ text: 'stored answer' }]), store, sessionId: 'older' });
    agents.push(stored);
    await stored.ready;
    await stored.prompt('an older question').result;
    const agent = createAgent({
      model: scriptedModel([{ text: 'Hello ', delayMs: 0 }, { text: 'again' }]),
      store,
      sessionId: 'now',
    });
    agents.push(agent);
    await agent.ready;
    const plain = createAgent({ model: scriptedModel([{ text: 'no store' }]) });
    const studio = await studioWith({ agents: [agent], store });
    expect(studio.attach(plain, { label: 'scratch' })).toBe('live-1');
    const sessions = await api<SessionInfo[]>(studio, '/api/sessions');
    expect(sessions.map((info) => [info.id, info.live, info.stored, info.controllable])).toEqual([
      ['now', true, true, true],
      ['live-1', true, false, true],
      ['older', false, true, false],
    ]);
    const reading = readStream(studio, 'now', (messages) =>
      messages.some((message) =>
        ('delta' in message ? (message.delta.events ?? []) : message.hello.events).some((e) => e.type === 'agentEnd'),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const result = await agent.prompt('hi').result;
    const messages = await reading;
    const hello = (messages[0] as { hello: Hello }).hello;
    expect(hello.info).toMatchObject({ id: 'now', live: true, stored: true });
    const events = messages.flatMap((message) =>
      'hello' in message ? message.hello.events : (message.delta.events ?? []),
    );
    // Every stored event reached the page: alone, or a stream delta in a coalesced one (its seq the last it holds).
    const unique = new Map(events.map((event) => [`${event.runId}:${event.seq}`, event]));
    const storedEvents = await store.loadEvents('now');
    const covered = [...unique.values()].flatMap((event) => {
      const count = event.type === 'messageUpdate' ? (event.coalesced ?? 1) : 1;
      return Array.from({ length: count }, (_, back) => `${event.type}@${event.seq - count + 1 + back}`);
    });
    expect(covered).toEqual(storedEvents.map((e) => `${e.type}@${e.seq}`));
    const streamed = (list: readonly { type: string; delta?: unknown }[]) =>
      list.flatMap((e) => (e.type === 'messageUpdate' ? [(e.delta as { text?: string }).text ?? ''] : [])).join('');
    expect(streamed([...unique.values()])).toBe(streamed(storedEvents));
    expect(streamed(storedEvents)).toBe('Hello ');
    // The reply's three deltas came in one flush, as one event.
    expect([...unique.values()].filter((e) => e.type === 'messageUpdate').map((e) => e.coalesced)).toEqual([3]);
    expect(messages.some((message) => 'delta' in message && message.delta.history)).toBe(true);
    expect(messages.some((message) => 'delta' in message && message.delta.counters)).toBe(true);
    expect(result.status).toBe('completed');
    // A stored session no agent runs here: read-only, but time travel works.
    const steps = await api<Array<{ version: number }>>(studio, '/api/steps?id=older');
    expect(steps.length).toBeGreaterThan(0);
    const control = await api<{ ok: boolean; code: string }>(studio, '/api/control', {
      id: 'older',
      action: 'prompt',
      text: 'x',
    });
    expect(control).toMatchObject({ ok: false, code: 'NotReady' });
  });

  it('a progress update JSON cannot hold (a BigInt, a cycle) is refused at the tool: the page gets what it sends next, live and in a snapshot', async () => {
    const cyclic: Record<string, unknown> = { step: 2 };
    cyclic.self = cyclic;
    const odd = defineTool({
      name: 'odd',
      description: 'Reports progress JSON cannot hold.',
      parameters: z.object({}),
      execute: async (_arguments, context) => {
        // Refused at the call (InvalidInput), with or without a store: nothing of it is published.
        await context.update({ bytes: 10n }).catch(() => context.update({ refused: 'bigint' }));
        await context.update(cyclic).catch(() => context.update({ refused: 'cycle' }));
        return 'done';
      },
    });
    const agent = createAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'odd', arguments: {} }] }, { text: 'ok' }]),
      tools: [odd],
    });
    agents.push(agent);
    const studio = await studioWith({ agents: [agent] });
    const ended = (messages: StreamMessage[]) =>
      messages.some((message) => 'delta' in message && (message.delta.events ?? []).some((e) => e.type === 'agentEnd'));
    const reading = readStream(studio, 'live-1', ended);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const result = await agent.prompt('go').result;
    const partials = (messages: StreamMessage[]) =>
      messages
        .flatMap((message) => ('hello' in message ? message.hello.events : (message.delta.events ?? [])))
        .flatMap((event) => (event.type === 'toolExecutionUpdate' ? [event.partial] : []));
    const expected = [{ refused: 'bigint' }, { refused: 'cycle' }];
    expect(partials(await reading)).toEqual(expected);
    // A page opening now gets the same events in its snapshot, serialized one by one.
    const late = await readStream(studio, 'live-1', (messages) => messages.length > 0);
    expect(partials(late)).toEqual(expected);
    expect(result).toMatchObject({ status: 'completed', counters: { toolCallsExecuted: 1 } });
  });

  it('a page that stops reading never holds the agent nor grows without bound: its messages drop, then it resyncs', async () => {
    const UPDATES = 20_000;
    const agent = chattyAgent(UPDATES);
    agents.push(agent);
    const studio = await studioWith({ agents: [agent] });
    // A raw reader that sends its request and then never reads (a paused tab, a stuck proxy).
    const url = new URL(studio.url);
    const socket = tcpConnect(Number(url.port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `GET /api/stream?id=live-1&token=${url.searchParams.get('token')} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`,
    );
    socket.pause();
    await expect.poll(() => studio.stats().clients.length).toBe(1);
    const events: unknown[] = [];
    agent.events.subscribe((event) => events.push(event));
    const started = performance.now();
    const result = await agent.prompt('go').result;
    await new Promise((resolve) => setTimeout(resolve, 200));
    const elapsed = performance.now() - started;
    expect(result.status).toBe('completed');
    expect(checkInvariants(events as never, result.messages).violations).toEqual([]);
    const [stalled] = studio.stats().clients;
    expect(stalled).toMatchObject({ session: 'live-1', behind: true });
    expect(stalled!.dropped).toBeGreaterThan(0);
    // Measured at every write: it held more than the limit once (that is when it let the page go), never more than the bound.
    const peak = stalled!.peakBufferedBytes;
    expect(peak).toBeGreaterThan(CLIENT_BUFFER_LIMIT);
    // Bounded whatever the run produced (here tens of megabytes of progress updates).
    const produced = events.reduce<number>((sum, event) => sum + JSON.stringify(event).length, 0);
    expect(produced).toBeGreaterThan(30 * 2 ** 20);
    expect(peak).toBeLessThan(STALLED_PAGE_BOUND);
    // The reader comes back: it drains what was buffered and gets a fresh snapshot, marked resync.
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.resume();
    await expect.poll(() => text.includes('"resync":true'), { timeout: 10_000 }).toBe(true);
    expect(studio.stats().clients[0]).toMatchObject({ behind: false });
    expect(studio.stats().clients[0]!.resyncs).toBeGreaterThanOrEqual(1);
    socket.destroy();
    console.log(
      `[stalled reader] ${UPDATES} updates (${(produced / 2 ** 20).toFixed(1)} MB of events) in ${elapsed.toFixed(0)} ms; the stalled page's buffer peaked at ${(peak / 2 ** 20).toFixed(2)} MB`,
    );
  }, 60_000);
});
