import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type Model } from 'agentchart';
import { fromAISDK } from 'agentchart/ai-sdk';
import { anthropic } from 'agentchart/anthropic';
import { openAICompatible } from 'agentchart/openai';
import { otelObserver } from 'agentchart/otel';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';
import { anthropicWire } from '../adapters/anthropic-wire.js';
import { openAIWire } from '../adapters/openai-wire.js';
import { httpError, ProtocolServer, type Responder } from '../adapters/protocol-server.js';
import { expectTrusted, watchTheProcess } from './harness.js';

/**
 * A gateway that echoes credentials: every error it answers repeats the key it received, the
 * request's Authorization / x-api-key header, and another user's `sk-…` key. Through each adapter,
 * with a retry, a fallback model, OpenTelemetry (content capture off and on) and a SQLite store,
 * none of those bytes may reach the event log, the result, the stored session file or the spans.
 */

watchTheProcess();

const hex = () => randomBytes(16).toString('hex');
/** Not `sk-`-shaped: only the adapter's knowledge of its own key can redact it. */
const PRIMARY_KEY = `gw_live_${hex()}`;
/** `sk-`-shaped: the fallback's AI SDK provider is not told it, so the shape alone must give it away. */
const FALLBACK_KEY = `sk-fallback-${hex()}`;
const STRANGER_KEY = `sk-proj-${hex()}`;
const SECRETS = [PRIMARY_KEY, FALLBACK_KEY, STRANGER_KEY];

type Protocol = 'openai' | 'anthropic';

/** The key this request carried, from the header its protocol puts it in. */
function receivedKey(req: { headers: IncomingHttpHeaders }): string {
  const header = req.headers['x-api-key'] ?? req.headers.authorization ?? '';
  return String(header).replace(/^Bearer\s+/i, '');
}

/** An error in the protocol's documented body, echoing what a leaky gateway echoes. */
function echoingError(protocol: Protocol, status: number, headers: Record<string, string> = {}): Responder {
  return async (res, req) => {
    const key = receivedKey(req);
    const echo =
      `Incorrect API key provided: ${key}. Request headers: authorization: Bearer ${key}; x-api-key: ${key}. ` +
      `Also seen on this gateway: ${STRANGER_KEY}. Raw: {"Authorization":"Bearer ${key}"}`;
    const [type, code] =
      status === 429
        ? ['rate_limit_error', 'rate_limit_exceeded']
        : status === 401
          ? ['authentication_error', 'invalid_api_key']
          : ['overloaded_error', null];
    const body =
      protocol === 'openai'
        ? JSON.stringify({ error: { message: echo, type: 'invalid_request_error', param: null, code } })
        : JSON.stringify({ type: 'error', error: { type, message: echo } });
    await httpError(status, body, headers)(res, req);
  };
}

interface AdapterCase {
  name: string;
  protocol: Protocol;
  create(server: ProtocolServer, key: string, role: 'primary' | 'fallback'): Model;
}

const ADAPTERS: AdapterCase[] = [
  {
    name: 'openAICompatible',
    protocol: 'openai',
    create: (server, key, role) =>
      openAICompatible({ baseURL: `${server.url}/v1`, apiKey: key, model: openAIWire.requestModel, name: role }),
  },
  {
    name: 'anthropic',
    protocol: 'anthropic',
    create: (server, key, role) =>
      anthropic({ baseURL: server.url, apiKey: key, model: anthropicWire.requestModel, name: role }),
  },
  {
    name: 'fromAISDK(@ai-sdk/openai-compatible)',
    protocol: 'openai',
    create: (server, key, role) =>
      fromAISDK(
        createOpenAICompatible({ name: 'gw', baseURL: `${server.url}/v1`, apiKey: key })(openAIWire.requestModel),
        {
          name: role,
          // The provider holds the key; the adapter is told the primary's, not the fallback's.
          ...(role === 'primary' ? { secrets: [key] } : {}),
        },
      ),
  },
  {
    name: 'fromAISDK(@ai-sdk/anthropic)',
    protocol: 'anthropic',
    create: (server, key, role) =>
      fromAISDK(createAnthropic({ baseURL: `${server.url}/v1`, apiKey: key })(anthropicWire.requestModel), {
        name: role,
        ...(role === 'primary' ? { secrets: [key] } : {}),
      }),
  },
];

interface SpanRecord {
  name: string;
  attributes: unknown;
  events: unknown;
  status: unknown;
}

/** Every secret's bytes, searched in a buffer (a store file is binary). */
function leaks(bytes: Buffer | string): string[] {
  const buffer = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  return SECRETS.filter((secret) => buffer.includes(Buffer.from(secret)));
}

describe('no secrets in diagnostics: a gateway that echoes the key', () => {
  let server: ProtocolServer;
  let dir: string;

  beforeAll(async () => {
    server = await ProtocolServer.start();
    dir = await mkdtemp(join(tmpdir(), 'agentchart-secrets-'));
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => server.reset());

  for (const adapter of ADAPTERS) {
    for (const captureContent of [false, true]) {
      it(`${adapter.name}, content capture ${captureContent ? 'on' : 'off'}: the keys are nowhere`, async () => {
        const { protocol } = adapter;
        server.respondWith(
          echoingError(protocol, 429, { 'retry-after': '0' }),
          echoingError(protocol, 503),
          echoingError(protocol, 401),
        );
        const exporter = new InMemorySpanExporter();
        const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('t');
        const storeDir = await mkdtemp(join(dir, 'store-'));
        const store = sqliteStore(join(storeDir, 'sessions.db'));
        const agent = createAgent({
          model: adapter.create(server, PRIMARY_KEY, 'primary'),
          fallbackModels: [adapter.create(server, FALLBACK_KEY, 'fallback')],
          retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5, jitter: false },
          otel: otelObserver({ tracer, captureContent }),
          store,
          sessionId: `secrets-${adapter.protocol}-${captureContent}`,
        });
        await agent.ready;
        const { result, events } = await expectTrusted(agent.prompt('summarize the incident'), [
          'summarize the incident',
        ]);
        store.close();

        // The failures did arrive, classified, their text cleaned: what happened is still readable.
        expect(server.requests).toHaveLength(3);
        expect(server.requests.map(receivedKey)).toEqual([PRIMARY_KEY, PRIMARY_KEY, FALLBACK_KEY]);
        expect(result).toMatchObject({ status: 'failed', error: { code: 'auth' } });
        expect(result.error?.message).toContain('Incorrect API key provided: [redacted]');
        const types = events.map((event) => event.type);
        expect(types).toContain('retry');
        expect(types).toContain('modelFallback');
        const fallback = events.find((event) => event.type === 'modelFallback');
        expect(fallback).toMatchObject({ error: { kind: 'overloaded', status: 503 } });
        expect(JSON.stringify(fallback)).toContain('[redacted]');

        const spans: SpanRecord[] = exporter.getFinishedSpans().map((span) => ({
          name: span.name,
          attributes: span.attributes,
          events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
          status: span.status,
        }));
        expect(spans.some((span) => JSON.stringify(span.status).includes('[redacted]'))).toBe(true);

        const files = await readdir(storeDir);
        expect(files).toContain('sessions.db');
        const storeBytes = Buffer.concat(await Promise.all(files.map((file) => readFile(join(storeDir, file)))));
        expect(storeBytes.includes(Buffer.from('[redacted]'))).toBe(true);

        expect(leaks(JSON.stringify(events)), 'the event log').toEqual([]);
        expect(leaks(JSON.stringify(result)), 'the run result').toEqual([]);
        expect(leaks(JSON.stringify(agent.messages)), 'the history').toEqual([]);
        expect(leaks(JSON.stringify(spans)), 'the spans').toEqual([]);
        expect(leaks(storeBytes), 'the stored session').toEqual([]);
      });
    }
  }
});

describe('no secrets in diagnostics: the runtime cleans what it records, whatever the model or tool', () => {
  it('a hand-written model, a throwing tool and a throwing policy: error texts redacted in events, history and result', async () => {
    const leakyTool = defineTool({
      name: 'fetch_report',
      description: 'fetches the report',
      parameters: z.object({}),
      execute: () => {
        throw new Error(`GET /report failed; request had Authorization: Bearer ${STRANGER_KEY}`);
      },
    });
    const scripted = scriptedModel([
      { toolCalls: [{ id: 'c1', name: 'fetch_report', arguments: {} }] },
      { error: { kind: 'auth', message: `key ${FALLBACK_KEY} rejected (x-api-key: ${FALLBACK_KEY})` } },
    ]);
    const agent = createAgent({
      model: scripted,
      tools: [leakyTool],
      policies: {
        postTurn: [
          () => {
            throw new Error(`policy saw ${STRANGER_KEY}`);
          },
        ],
      },
    });
    const { result, events } = await expectTrusted(agent.prompt('go'), ['go']);

    expect(result).toMatchObject({
      status: 'failed',
      error: { code: 'auth', message: 'key [redacted] rejected (x-api-key: [redacted])' },
    });
    const toolResult = agent.messages.find((message) => message.role === 'toolResult');
    expect(toolResult).toMatchObject({
      isError: true,
      content: 'GET /report failed; request had Authorization: [redacted]',
    });
    expect(events.find((event) => event.type === 'policyError')).toMatchObject({ message: 'policy saw [redacted]' });
    expect(leaks(JSON.stringify(events))).toEqual([]);
    expect(leaks(JSON.stringify(agent.messages))).toEqual([]);
    expect(leaks(JSON.stringify(result))).toEqual([]);
  });
});
