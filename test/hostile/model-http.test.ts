import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type AgentOptions } from 'agentchart';
import type { ErrorKind } from 'agentchart/model-kit';
import { ALL_HARNESSES } from '../adapters/harnesses.js';
import { ProtocolServer, sse, type Responder } from '../adapters/protocol-server.js';
import { sseText } from '../adapters/wire.js';
import type { AdapterHarness } from '../adapters/conformance.js';
import { expectTrusted, ofType, watchTheProcess } from './harness.js';

// The hostile-input contract through each adapter, against a hostile local HTTP server speaking its provider's
// protocol: SSE cut mid-event, invalid JSON in a data line, HTML bodies, stalls after the headers
// and after a chunk (the adapter's timeout and the agent's modelIdleMs both limit the body), a
// retry-after that is garbage, a gzip body that is not gzip, a huge line, a duplicate tool-call
// start. Each failure is classified into a typed error kind; one retry then recovers.

watchTheProcess();

const PROMPT = 'hello over a hostile network';
const write = defineTool({
  name: 'write',
  description: 'writes a file',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => `wrote ${path}`,
});
const remove = defineTool({
  name: 'delete',
  description: 'deletes a file',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => `DELETED ${path}`,
});

/** Writes the status, the headers and a body as given (then ends, holds, or cuts the socket). */
const raw =
  (
    status: number,
    headers: Record<string, string>,
    body: string | Uint8Array,
    then: 'end' | 'hold' | 'cut' = 'end',
  ): Responder =>
  async (res) => {
    res.writeHead(status, headers);
    res.flushHeaders();
    if (body.length > 0) res.write(body);
    if (then === 'end') res.end();
    if (then === 'cut') res.socket?.destroy();
  };

const isAnthropic = (harness: AdapterHarness) => harness.wire.requestModel.startsWith('claude');
const sseEvent = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const openAIChunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, delta, finish_reason: finish }],
  })}\n\n`;

/**
 * A reply whose two tool calls share one provider index (Anthropic: a repeated content_block_start;
 * OpenAI: a new id at index 0).
 */
function duplicateToolStart(harness: AdapterHarness): string[] {
  if (isAnthropic(harness)) {
    const block = (id: string, name: string) =>
      sseEvent('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id, name, input: {} },
      });
    const json = (partial_json: string) =>
      sseEvent('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json },
      });
    return [
      sseEvent('message_start', {
        type: 'message_start',
        message: {
          id: 'm',
          type: 'message',
          role: 'assistant',
          model: harness.wire.responseModel,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 3, output_tokens: 1 },
        },
      }),
      block('toolu_a', 'write'),
      json('{"path":'),
      block('toolu_b', 'delete'),
      json('"/"}'),
      sseEvent('content_block_stop', { type: 'content_block_stop', index: 0 }),
      sseEvent('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 5 },
      }),
      sseEvent('message_stop', { type: 'message_stop' }),
    ];
  }
  return [
    openAIChunk({ role: 'assistant', content: '' }),
    openAIChunk({
      tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'write', arguments: '{"path":' } }],
    }),
    openAIChunk({
      tool_calls: [{ index: 0, id: 'call_b', type: 'function', function: { name: 'delete', arguments: '"/"}' } }],
    }),
    openAIChunk({}, 'tool_calls'),
    'data: [DONE]\n\n',
  ];
}

let server: ProtocolServer;
beforeAll(async () => {
  server = await ProtocolServer.start();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.reset());

interface HostileCase {
  name: string;
  responder: (harness: AdapterHarness) => Responder;
  /** The kinds the failed attempt may be classified as (first: the expected one). */
  kinds: (harness: AdapterHarness) => ErrorKind[];
  adapterTimeoutMs?: number;
  agent?: Partial<AgentOptions>;
}

const text = (harness: AdapterHarness, parts: string[]) =>
  sseText(harness.wire.events({ text: parts, finish: 'stop', usage: { input: 5, output: 2 } }));

const CASES: HostileCase[] = [
  {
    name: 'an SSE stream cut in the middle of an event',
    responder: (h) => sse([...text(h, ['Hel', 'lo']).slice(0, 2), text(h, ['x'])[2]!.slice(0, 15)], { then: 'cut' }),
    kinds: () => ['network'],
  },
  {
    name: 'a data line that is not JSON',
    responder: (h) =>
      sse([
        text(h, ['ok'])[0]!,
        isAnthropic(h) ? 'event: content_block_delta\ndata: {not json at all\n\n' : 'data: {not json at all\n\n',
        ...text(h, ['ok']).slice(1),
      ]),
    kinds: () => ['invalidResponse'],
  },
  {
    name: 'an HTML page with status 200 (a captive portal)',
    responder: () => raw(200, { 'content-type': 'text/html' }, '<html><body>Please log in</body></html>'),
    kinds: () => ['invalidResponse', 'network'],
  },
  {
    name: 'an HTML error page with status 502',
    responder: () => raw(502, { 'content-type': 'text/html' }, '<html><body>Bad gateway</body></html>'),
    kinds: () => ['network'],
  },
  {
    name: 'headers, then silence (the adapter timeout limits the body)',
    responder: () => sse([], { then: 'hold' }),
    kinds: () => ['timeout'],
    adapterTimeoutMs: 200,
  },
  {
    name: 'headers and one chunk, then silence (adapter timeout)',
    responder: (h) => sse(text(h, ['partial']).slice(0, 2), { then: 'hold' }),
    kinds: () => ['timeout'],
    adapterTimeoutMs: 200,
  },
  {
    name: 'headers and one chunk, then silence (the agent’s modelIdleMs)',
    responder: (h) => sse(text(h, ['partial']).slice(0, 2), { then: 'hold' }),
    kinds: () => ['timeout'],
    agent: { timeouts: { modelIdleMs: 200 } },
  },
  {
    name: 'a 429 whose retry-after is garbage',
    responder: (h) =>
      raw(429, { 'content-type': 'application/json', 'retry-after': 'soon-ish' }, h.wire.errorBody('rateLimit')),
    kinds: () => ['rateLimit'],
  },
  {
    name: 'a gzip body that is not gzip',
    responder: () =>
      raw(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }, 'this is not gzip at all'),
    kinds: () => ['network'],
  },
  {
    name: 'a truncated gzip body',
    responder: (h) =>
      raw(
        200,
        { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' },
        gzipSync(text(h, ['ok']).join('')).subarray(0, 20),
        'cut',
      ),
    kinds: () => ['network'],
  },
  {
    name: 'two tool calls at one provider index',
    responder: (h) => sse(duplicateToolStart(h)),
    // The SDK adapters pass the second start on (refused); the AI SDK providers split the calls themselves.
    kinds: (h) => (h.name.startsWith('fromAISDK') ? [] : ['invalidResponse']),
  },
];

describe.each(ALL_HARNESSES)('hostile HTTP through $name', (harness) => {
  it.each(CASES)(
    '$name: a typed error, then the retry recovers',
    async ({ responder, kinds, adapterTimeoutMs, agent: extra }) => {
      server.respondWith(responder(harness), sse(text(harness, ['Recovered ', 'answer'])));
      const model = harness.createModel(server, adapterTimeoutMs !== undefined ? { timeoutMs: adapterTimeoutMs } : {});
      const agent = createAgent({
        model,
        tools: [write, remove],
        retry: { maxAttempts: 2, baseDelayMs: 1, jitter: false },
        ...extra,
      });
      const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
      const expected = kinds(harness);
      const retries = ofType(events, 'retry');
      if (expected.length === 0) {
        // Nothing was refused: the two calls stayed apart and neither ran with glued arguments.
        expect(retries).toEqual([]);
        expect(JSON.stringify(result.messages)).not.toContain('DELETED /');
      } else {
        expect(retries.map((retry) => retry.error.kind)).toHaveLength(1);
        expect(expected).toContain(retries[0]?.error.kind);
        // A garbage retry-after is ignored: the exponential backoff applies, never NaN.
        expect(retries[0]?.delayMs).toBe(1);
        expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
        expect(result.messages.at(-1)).toMatchObject({
          role: 'assistant',
          content: [{ type: 'text', text: 'Recovered answer' }],
        });
        // The refused attempt's partial text never reached the log.
        expect(JSON.stringify(events)).not.toContain('partial');
      }
      expect(server.unexpectedRequests).toBe(0);
    },
  );

  it('a line of 3,000,000 characters is read whole', async () => {
    server.respondWith(sse(text(harness, ['x'.repeat(3_000_000)])));
    const agent = createAgent({ model: harness.createModel(server) });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result.status).toBe('completed');
    expect(result.messages.at(-1)).toMatchObject({ content: [{ text: expect.stringMatching(/^x{3000000}$/) }] });
  });

  it('a mid-stream error event: the attempt fails as classified and the client releases the body', async () => {
    server.respondWith(sse(harness.wire.midStreamOverloaded('Partial'), { then: 'hold' }));
    const agent = createAgent({ model: harness.createModel(server), retry: { maxAttempts: 1 } });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result).toMatchObject({ status: 'failed', endReason: 'retryExhausted', error: { code: 'overloaded' } });
    // The server held the response open: only the client closing it ends the request.
    await server.clientClosedEarly();
  });

  it('a stall the agent’s modelIdleMs ends also closes the HTTP request', async () => {
    server.respondWith(sse(text(harness, ['partial']).slice(0, 2), { then: 'hold' }));
    const agent = createAgent({
      model: harness.createModel(server),
      retry: { maxAttempts: 1 },
      timeouts: { modelIdleMs: 150 },
    });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result).toMatchObject({
      status: 'failed',
      error: { code: 'timeout', message: 'model stream silent for 150 ms' },
    });
    await server.clientClosedEarly();
  });
});
