import type { Model, ModelRequest, ModelStreamEvent, Usage } from 'agentchart';
import { costOf, type ModelPricing } from 'agentchart/model-kit';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectionReset, httpError, noAnswer, ProtocolServer, sse } from './protocol-server.js';
import {
  byteSlices,
  sseText,
  untilFirstToolFragment,
  withoutFinish,
  type ErrorBodyKind,
  type ScriptedReply,
  type Wire,
} from './wire.js';

/** One adapter wired to one protocol server: what the conformance suite runs against. */
export interface AdapterHarness {
  name: string;
  wire: Wire;
  createModel(server: ProtocolServer, options?: { timeoutMs?: number; pricing?: ModelPricing }): Model;
  /** The index this adapter reports for the reply's i-th tool call; the wire's provider index by default. */
  toolIndex?(reply: ScriptedReply, i: number): number;
  /** Whether the adapter has a client-side request timeout to test. */
  clientTimeout: boolean;
}

export const WEATHER_REQUEST: ModelRequest = {
  systemPrompt: 'You are terse.',
  messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }],
  tools: [
    {
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      },
    },
  ],
};

export async function collect(
  model: Model,
  signal: AbortSignal = new AbortController().signal,
  request: ModelRequest = WEATHER_REQUEST,
): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of model.stream(request, { signal })) events.push(event);
  return events;
}

interface FoldedToolCall {
  index: number;
  id: string;
  name: string;
  fragments: string[];
  ended: boolean;
}

/** A stream folded into what it said, plus every protocol rule of ModelStreamEvent it broke. */
export interface FoldedStream {
  model: string | undefined;
  thinking: string[];
  text: string[];
  toolCalls: FoldedToolCall[];
  usage: Usage | undefined;
  terminal: ModelStreamEvent | undefined;
  problems: string[];
}

export function fold(events: readonly ModelStreamEvent[]): FoldedStream {
  const folded: FoldedStream = {
    model: undefined,
    thinking: [],
    text: [],
    toolCalls: [],
    usage: undefined,
    terminal: undefined,
    problems: [],
  };
  const open = new Map<number, FoldedToolCall>();
  events.forEach((event, position) => {
    if (folded.terminal) folded.problems.push(`${event.type} after the terminal event`);
    if (position === 0 && event.type !== 'start' && event.type !== 'error')
      folded.problems.push(`first event is ${event.type}`);
    switch (event.type) {
      case 'start':
        if (position !== 0) folded.problems.push('start is not first');
        folded.model = event.model;
        break;
      case 'thinkingDelta':
        folded.thinking.push(event.delta);
        break;
      case 'textDelta':
        folded.text.push(event.delta);
        break;
      case 'toolCallStart': {
        if (open.has(event.index)) folded.problems.push(`toolCallStart for open index ${event.index}`);
        const call: FoldedToolCall = {
          index: event.index,
          id: event.id,
          name: event.name,
          fragments: [],
          ended: false,
        };
        open.set(event.index, call);
        folded.toolCalls.push(call);
        break;
      }
      case 'toolCallDelta': {
        const call = open.get(event.index);
        if (!call) folded.problems.push(`toolCallDelta for index ${event.index} that is not open`);
        else call.fragments.push(event.argumentsDelta);
        break;
      }
      case 'toolCallEnd': {
        const call = open.get(event.index);
        if (!call) folded.problems.push(`toolCallEnd for index ${event.index} that is not open`);
        else {
          call.ended = true;
          open.delete(event.index);
        }
        break;
      }
      case 'usage':
        folded.usage = event.usage;
        break;
      case 'done':
      case 'error':
        folded.terminal = event;
        break;
    }
  });
  if (!folded.terminal) folded.problems.push('no terminal event');
  return folded;
}

function expectedUsage(wire: Wire, usage: Usage): Usage {
  return {
    input: usage.input,
    output: usage.output,
    ...(usage.cacheRead ? { cacheRead: usage.cacheRead } : {}),
    ...(usage.cacheWrite && wire.reportsCacheWrite ? { cacheWrite: usage.cacheWrite } : {}),
  };
}

const USAGE: Usage = { input: 25, output: 12 };

const HTML_502 =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

interface HttpCase {
  title: string;
  status: number;
  body: ErrorBodyKind | 'html502';
  headers?: Record<string, string>;
  kind: string;
  retryable: boolean;
  retryAfterMs?: number;
}

const HTTP_CASES: HttpCase[] = [
  {
    title: '429 + retry-after seconds → rateLimit',
    status: 429,
    body: 'rateLimit',
    headers: { 'retry-after': '2' },
    kind: 'rateLimit',
    retryable: true,
    retryAfterMs: 2000,
  },
  {
    title: '429 + retry-after-ms → rateLimit (ms wins)',
    status: 429,
    body: 'rateLimit',
    headers: { 'retry-after-ms': '1500', 'retry-after': '2' },
    kind: 'rateLimit',
    retryable: true,
    retryAfterMs: 1500,
  },
  { title: '529 → overloaded', status: 529, body: 'overloaded', kind: 'overloaded', retryable: true },
  {
    title: '503 + retry-after → overloaded',
    status: 503,
    body: 'overloaded',
    headers: { 'retry-after': '3' },
    kind: 'overloaded',
    retryable: true,
    retryAfterMs: 3000,
  },
  { title: '500 → overloaded', status: 500, body: 'serverError', kind: 'overloaded', retryable: true },
  { title: '502 from a gateway → network', status: 502, body: 'html502', kind: 'network', retryable: true },
  { title: '504 → timeout', status: 504, body: 'gatewayTimeout', kind: 'timeout', retryable: true },
  { title: '401 → auth', status: 401, body: 'unauthorized', kind: 'auth', retryable: false },
  { title: '403 → auth', status: 403, body: 'forbidden', kind: 'auth', retryable: false },
  {
    title: '400 context length → contextOverflow',
    status: 400,
    body: 'contextOverflow',
    kind: 'contextOverflow',
    retryable: false,
  },
  { title: '400 other → badRequest', status: 400, body: 'badRequest', kind: 'badRequest', retryable: false },
];

/** The provider's own message inside a JSON error body, which the classified message must carry. */
function providerMessage(body: string): string {
  const parsed = JSON.parse(body) as { error: { message: string } };
  return parsed.error.message;
}

/**
 * The conformance suite every adapter passes against its local protocol server: streams, tool calls,
 * usage and cost, every error class from real HTTP, and abort that really closes the connection.
 */
export function describeConformance(harness: AdapterHarness): void {
  const { wire } = harness;
  const toolIndex = harness.toolIndex ?? wire.toolIndex;

  describe(`${harness.name} conformance`, () => {
    let server: ProtocolServer;
    beforeAll(async () => {
      server = await ProtocolServer.start();
    });
    afterAll(async () => {
      await server.close();
    });
    afterEach(() => {
      expect(server.unexpectedRequests).toBe(0);
      server.reset();
    });

    const expectReply = async (reply: ScriptedReply, chunks?: Array<string | Uint8Array>) => {
      server.respondWith(sse(chunks ?? sseText(wire.events(reply))));
      const folded = fold(await collect(harness.createModel(server)));
      expect(folded).toEqual({
        model: wire.responseModel,
        thinking: reply.thinking ?? [],
        text: reply.text ?? [],
        toolCalls: (reply.toolCalls ?? []).map((call, i) => ({
          index: toolIndex(reply, i),
          id: call.id,
          name: call.name,
          fragments: call.fragments,
          ended: true,
        })),
        usage: expectedUsage(wire, reply.usage),
        terminal: { type: 'done', stopReason: reply.finish },
        problems: [],
      });
      expect(server.requests).toHaveLength(1);
      return folded;
    };

    it('streams text as start, text deltas, usage, done(stop) in that exact order', async () => {
      server.respondWith(sse(sseText(wire.events({ text: ['Hel', 'lo, ', 'world'], finish: 'stop', usage: USAGE }))));
      expect(await collect(harness.createModel(server))).toEqual([
        { type: 'start', model: wire.responseModel },
        { type: 'textDelta', delta: 'Hel' },
        { type: 'textDelta', delta: 'lo, ' },
        { type: 'textDelta', delta: 'world' },
        { type: 'usage', usage: USAGE },
        { type: 'done', stopReason: 'stop' },
      ]);
    });

    it('streams thinking before text', async () => {
      await expectReply({ thinking: ['The user wants ', 'a greeting.'], text: ['Hi!'], finish: 'stop', usage: USAGE });
    });

    it('streams one tool call after text, ending with done(toolUse)', async () => {
      await expectReply({
        text: ['Let me check.'],
        toolCalls: [{ id: 'call_paris_1', name: 'get_weather', fragments: ['{"city":', ' "Paris"}'] }],
        finish: 'toolUse',
        usage: USAGE,
      });
    });

    it('streams parallel tool calls, each under its own index', async () => {
      const folded = await expectReply({
        toolCalls: [
          { id: 'call_paris_1', name: 'get_weather', fragments: ['{"ci', 'ty": "Pa', 'ris"}'] },
          { id: 'call_rome_2', name: 'get_weather', fragments: ['{"city"', ': "Rome"}'] },
        ],
        finish: 'toolUse',
        usage: USAGE,
      });
      expect(folded.toolCalls.map((call) => JSON.parse(call.fragments.join('')))).toEqual([
        { city: 'Paris' },
        { city: 'Rome' },
      ]);
    });

    it('reassembles tool JSON fragmented into 3-character pieces over 5-byte TCP writes', async () => {
      const json = JSON.stringify({ path: '/tmp/café "notes".txt', lines: [1, 2, 3], note: 'naïve ☕ \\ done' });
      const fragments = json.match(/[\s\S]{1,3}/g) ?? [];
      const reply: ScriptedReply = {
        toolCalls: [{ id: 'call_write_1', name: 'write_file', fragments }],
        finish: 'toolUse',
        usage: USAGE,
      };
      const folded = await expectReply(reply, byteSlices(wire.events(reply), 5));
      expect(JSON.parse(folded.toolCalls[0]?.fragments.join('') ?? '')).toEqual({
        path: '/tmp/café "notes".txt',
        lines: [1, 2, 3],
        note: 'naïve ☕ \\ done',
      });
    });

    it('reports a length stop as done(length)', async () => {
      await expectReply({ text: ['It was a dark and'], finish: 'length', usage: USAGE });
    });

    it('reports usage with cache tokens and prices it from the model table', async () => {
      const usage: Usage = { input: 1200, output: 300, cacheRead: 400, cacheWrite: 100 };
      const folded = await expectReply({ text: ['ok'], finish: 'stop', usage });
      const model = harness.createModel(server);
      expect(model.name).toBe(wire.requestModel);
      expect(model.pricing).toEqual(wire.listPrice);
      const price = wire.listPrice;
      const expected =
        (1200 * price.input +
          300 * price.output +
          400 * (price.cacheRead ?? 0) +
          (wire.reportsCacheWrite ? 100 * (price.cacheWrite ?? 0) : 0)) /
        1_000_000;
      expect(costOf(folded.usage, model.pricing)).toBeCloseTo(expected, 12);
    });

    it('lets an explicit pricing override the table', () => {
      const pricing = { input: 1, output: 2 };
      expect(harness.createModel(server, { pricing }).pricing).toEqual(pricing);
    });

    for (const testCase of HTTP_CASES) {
      it(`classifies HTTP ${testCase.title}, with one request only`, async () => {
        const body = testCase.body === 'html502' ? HTML_502 : wire.errorBody(testCase.body);
        const contentType: Record<string, string> = testCase.body === 'html502' ? { 'content-type': 'text/html' } : {};
        server.respondWith(httpError(testCase.status, body, { ...contentType, ...testCase.headers }));
        const events = await collect(harness.createModel(server));
        expect(events).toEqual([
          {
            type: 'error',
            error: {
              kind: testCase.kind,
              message: expect.any(String),
              retryable: testCase.retryable,
              status: testCase.status,
              ...(testCase.retryAfterMs !== undefined ? { retryAfterMs: testCase.retryAfterMs } : {}),
            },
          },
        ]);
        const error = events[0]?.type === 'error' ? events[0].error : undefined;
        if (testCase.body !== 'html502') expect(error?.message).toContain(providerMessage(body));
        expect(server.requests).toHaveLength(1);
      });
    }

    it('classifies 429 + retry-after as an HTTP-date → rateLimit with the time left', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      try {
        vi.setSystemTime(new Date('2025-06-01T12:00:00.000Z'));
        server.respondWith(
          httpError(429, wire.errorBody('rateLimit'), { 'retry-after': 'Sun, 01 Jun 2025 12:00:07 GMT' }),
        );
        const events = await collect(harness.createModel(server));
        expect(events).toEqual([
          {
            type: 'error',
            error: { kind: 'rateLimit', message: expect.any(String), retryable: true, status: 429, retryAfterMs: 7000 },
          },
        ]);
      } finally {
        vi.useRealTimers();
      }
    });

    it('classifies a connection reset before any response → network', async () => {
      server.respondWith(connectionReset());
      const events = await collect(harness.createModel(server));
      expect(events).toEqual([
        { type: 'error', error: { kind: 'network', message: expect.any(String), retryable: true } },
      ]);
      expect(server.requests).toHaveLength(1);
    });

    it('classifies a stream cut mid tool call → network, the call left without an end', async () => {
      const reply: ScriptedReply = {
        text: ['Checking.'],
        toolCalls: [{ id: 'call_paris_1', name: 'get_weather', fragments: ['{"city"', ': "Pa', 'ris"}'] }],
        finish: 'toolUse',
        usage: USAGE,
      };
      server.respondWith(sse(untilFirstToolFragment(wire.events(reply)), { then: 'cut' }));
      const folded = fold(await collect(harness.createModel(server)));
      expect(folded).toEqual({
        model: wire.responseModel,
        thinking: [],
        text: ['Checking.'],
        toolCalls: [
          { index: toolIndex(reply, 0), id: 'call_paris_1', name: 'get_weather', fragments: ['{"city"'], ended: false },
        ],
        usage: undefined,
        terminal: { type: 'error', error: { kind: 'network', message: expect.any(String), retryable: true } },
        problems: [],
      });
    });

    it('classifies a stream that closes before saying how it finished → network', async () => {
      server.respondWith(sse(withoutFinish(wire.events({ text: ['Half an ans'], finish: 'stop', usage: USAGE }))));
      const folded = fold(await collect(harness.createModel(server)));
      expect(folded.text).toEqual(['Half an ans']);
      expect(folded.terminal).toEqual({
        type: 'error',
        error: { kind: 'network', message: expect.any(String), retryable: true },
      });
      expect(folded.problems).toEqual([]);
    });

    it("classifies the provider's mid-stream error event → overloaded", async () => {
      server.respondWith(sse(wire.midStreamOverloaded('Partial')));
      const folded = fold(await collect(harness.createModel(server)));
      expect(folded.text).toEqual(['Partial']);
      expect(folded.terminal).toEqual({
        type: 'error',
        error: { kind: 'overloaded', message: expect.any(String), retryable: true },
      });
      expect(folded.problems).toEqual([]);
    });

    it('aborts mid-stream: the next event is error(aborted) and the server sees the connection close', async () => {
      const reply: ScriptedReply = { text: ['Hel', 'lo'], finish: 'stop', usage: USAGE };
      server.respondWith(sse(withoutFinish(wire.events(reply)), { then: 'hold' }));
      const controller = new AbortController();
      const events: ModelStreamEvent[] = [];
      for await (const event of harness.createModel(server).stream(WEATHER_REQUEST, { signal: controller.signal })) {
        events.push(event);
        if (event.type === 'textDelta' && event.delta === 'lo') controller.abort('user pressed stop');
      }
      expect(events).toEqual([
        { type: 'start', model: wire.responseModel },
        { type: 'textDelta', delta: 'Hel' },
        { type: 'textDelta', delta: 'lo' },
        { type: 'error', error: { kind: 'aborted', message: 'user pressed stop', retryable: false } },
      ]);
      await server.clientClosedEarly();
      expect(server.closedEarly).toBe(1);
    });

    it('cancels the request when the consumer stops reading', async () => {
      const reply: ScriptedReply = { text: ['Hel', 'lo'], finish: 'stop', usage: USAGE };
      server.respondWith(sse(withoutFinish(wire.events(reply)), { then: 'hold' }));
      for await (const event of harness
        .createModel(server)
        .stream(WEATHER_REQUEST, { signal: new AbortController().signal })) {
        if (event.type === 'textDelta') break;
      }
      await server.clientClosedEarly();
      expect(server.closedEarly).toBe(1);
    });

    it('answers an already aborted signal with error(aborted) and sends no request', async () => {
      const controller = new AbortController();
      controller.abort();
      expect(await collect(harness.createModel(server), controller.signal)).toEqual([
        { type: 'error', error: { kind: 'aborted', message: 'aborted', retryable: false } },
      ]);
      expect(server.requests).toHaveLength(0);
    });

    if (harness.clientTimeout) {
      it('classifies its own request timeout → timeout', async () => {
        server.respondWith(noAnswer());
        const events = await collect(harness.createModel(server, { timeoutMs: 40 }));
        expect(events).toEqual([
          { type: 'error', error: { kind: 'timeout', message: expect.any(String), retryable: true } },
        ]);
        expect(server.requests).toHaveLength(1);
      });
    }
  });
}
