import { mkdtempSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { z } from 'zod';
import { AgentError, createAgent, defineTool, toolCallsOf, type SessionStore } from 'agentchart';
import { postgresStore } from 'agentchart/postgres';
import { sqliteStore } from 'agentchart/sqlite';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { startPostgres } from '../support/postgres.js';
import { reportStats } from '../support/stats.js';

/**
 * An agent per HTTP request, as a web app would write it: a real node:http server creates an
 * agent for each request, prompts it and answers with the run's result, and never closes it.
 * 200 requests over 20 sessions, 8 at a time, on one store. A request for a session whose run is
 * in progress is refused at once (409, SessionBusy, nothing written) and its retry completes.
 */

const SESSIONS = 20;
const REQUESTS = 200;
const CONCURRENCY = 8;
/** Every 20th request is sent again at once, while its first copy runs: a refusal to provoke. */
const COLLIDE_EVERY = 20;

const started = await startPostgres();
const server = 'server' in started ? started.server : null;
if (!server) console.log(`postgres per-request tests skipped: ${'skipped' in started ? started.skipped : ''}`);
afterAll(() => server?.stop());

async function postgresOn(name: string): Promise<SessionStore & { close(): unknown }> {
  const admin = new pg.Client({ connectionString: server?.connectionString });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}_${process.pid}`);
  await admin.end();
  const connectionString = (server?.connectionString ?? '').replace(/\/postgres$/, `/${name}_${process.pid}`);
  return postgresStore({ connectionString });
}

/** A first request's tool holds until its colliding copy got its answer: the copy surely arrives mid-run. */
const holds = new Map<string, { promise: Promise<void>; release(): void }>();
function hold(key: string) {
  let release: () => void = () => {};
  const promise = new Promise<void>((resolve) => (release = resolve));
  holds.set(key, { promise, release });
}

/** Requests whose tool is running now. */
const running = new Set<string>();

const work = defineTool({
  name: 'work',
  description: 'Does a little work for the request.',
  parameters: z.object({ request: z.string() }),
  execute: async ({ request }) => {
    running.add(request);
    try {
      await new Promise((resolve) => setTimeout(resolve, 2 + Math.floor(Math.random() * 8)));
      await holds.get(request)?.promise;
      return `worked on ${request}`;
    } finally {
      running.delete(request);
    }
  },
});

/** One tool call for the request's prompt, then the answer. */
const model = () =>
  scriptedModel(
    (request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'user')
        return { toolCalls: [{ id: `call-${last.content}`, name: 'work', arguments: { request: last.content } }] };
      return { text: 'done' };
    },
    { recordRequests: false },
  );

function appServer(store: SessionStore): Promise<{ server: Server; port: number }> {
  const app = createServer((req, res) => {
    const [, , sessionId, requestId] = (req.url ?? '').split('/');
    void (async () => {
      // An agent per request, never closed: a handle on the stored session.
      const agent = createAgent({ model: model(), tools: [work], store, sessionId: sessionId as string });
      try {
        await agent.ready;
        const result = await agent.prompt(requestId as string).result;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: result.status }));
      } catch (error) {
        const busy = error instanceof AgentError && error.code === 'SessionBusy';
        res.writeHead(busy ? 409 : 500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: error instanceof AgentError ? error.code : 'unknown', message: String(error) }));
      }
    })();
  });
  return new Promise((resolve) =>
    app.listen(0, '127.0.0.1', () => resolve({ server: app, port: (app.address() as AddressInfo).port })),
  );
}

function post(port: number, path: string): Promise<{ status: number; body: { status?: string; code?: string } }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST' }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { status?: string } }));
    });
    req.on('error', reject);
    req.end();
  });
}

const backends: Array<[string, () => Promise<SessionStore & { close(): unknown }>, boolean]> = [
  [
    'one SQLite file',
    async () => sqliteStore(join(mkdtempSync(join(tmpdir(), 'agentchart-per-request-')), 's.db')),
    true,
  ],
  ['one Postgres database', () => postgresOn('per_request'), server !== null],
];

describe.each(backends)('an agent per HTTP request on %s', (name, open, available) => {
  it.skipIf(!available)(
    '200 requests over 20 sessions, 8 at a time: all complete; one arriving mid-run is refused at once with SessionBusy, nothing written, and its retry completes',
    async () => {
      const store = await open();
      const { server: app, port } = await appServer(store);
      const jobs = Array.from({ length: REQUESTS }, (_, i) => ({ session: `chat-${i % SESSIONS}`, id: `r${i}` }));
      let refusedMidRun = 0;
      let retries = 0;
      let next = 0;
      const began = performance.now();
      const send = async (job: { session: string; id: string }): Promise<void> => {
        for (;;) {
          const answer = await post(port, `/sessions/${job.session}/${job.id}`);
          if (answer.status === 200) return void expect(answer.body.status).toBe('completed');
          expect(answer, `${job.id} on ${job.session}`).toMatchObject({ status: 409, body: { code: 'SessionBusy' } });
          retries += 1;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      };
      const worker = async () => {
        while (next < jobs.length) {
          const index = next++;
          const job = jobs[index] as { session: string; id: string };
          if (index % COLLIDE_EVERY !== COLLIDE_EVERY - 1) {
            await send(job);
            continue;
          }
          // The same session again while this run is held in its tool: refused at once, then retried.
          hold(job.id);
          const first = send(job);
          await until(() => running.has(job.id));
          const copy = { session: job.session, id: `${job.id}-again` };
          const refused = await post(port, `/sessions/${copy.session}/${copy.id}`);
          expect(refused).toMatchObject({ status: 409, body: { code: 'SessionBusy' } });
          refusedMidRun += 1;
          holds.get(job.id)?.release();
          await first;
          await send(copy);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const seconds = (performance.now() - began) / 1000;
      app.close();
      reportStats(
        `${name}: ${REQUESTS + refusedMidRun} requests completed in ${seconds.toFixed(2)} s (${((REQUESTS + refusedMidRun) / seconds).toFixed(0)} requests/s), ${refusedMidRun} refused mid-run, ${retries} retries`,
      );
      expect(refusedMidRun).toBe(REQUESTS / COLLIDE_EVERY);

      // Every completed request is in its session exactly once; a refused one wrote nothing.
      const expected = new Map<string, string[]>();
      for (const job of jobs) {
        const list = expected.get(job.session) ?? [];
        list.push(job.id);
        if (Number(job.id.slice(1)) % COLLIDE_EVERY === COLLIDE_EVERY - 1) list.push(`${job.id}-again`);
        expected.set(job.session, list);
      }
      for (const [session, ids] of expected) {
        const checkpoint = await store.load(session);
        const history = checkpoint?.history ?? [];
        const prompts = history.filter((m) => m.role === 'user').map((m) => m.content);
        expect([...prompts].sort(), session).toEqual([...ids].sort());
        expect(checkpoint?.run, session).toBeNull();
        // Counters add up over the handles: two turns per request.
        expect(checkpoint?.counters.turns, session).toBe(2 * ids.length);
        expect(checkpoint?.counters.toolCallsExecuted, session).toBe(ids.length);
        const events = await store.loadEvents(session);
        expect(checkInvariants(events, history).violations, session).toEqual([]);
        expect(events.filter((e) => e.type === 'agentStart')).toHaveLength(ids.length);
        for (const message of history)
          if (message.role === 'assistant')
            for (const call of toolCallsOf(message))
              expect(history.filter((m) => m.role === 'toolResult' && m.toolCallId === call.id)).toHaveLength(1);
      }
      await store.close();
    },
    120_000,
  );
});

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 2_000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error('timed out waiting for the held run to reach its tool');
}
