import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { createAgent, defineTool, type ModelStreamEvent } from 'agentchart';
import { z } from 'zod';
import {
  CALL,
  expectIdle,
  expectTrusted,
  generatorOf,
  macrotasks,
  ofType,
  rawModel,
  settledFlag,
  TEXT,
  watchTheProcess,
} from './harness.js';

// The hostile-input contract, model stream boundary: every event is checked as it arrives; a wrong shape, a second
// toolCallStart for an open index, or a stream that throws / rejects / is not iterable ends the
// attempt as `invalidResponse` (retryable); events after done/error are ignored and the iterator
// is closed on every exit path; usage that is not a finite non-negative integer counts as 0.

watchTheProcess();

const PROMPT = 'summarise the report';
const RECOVERED = [...TEXT('recovered')];

/** Call 0 streams `first` (a generator of raw values), call 1 recovers; one retry is allowed. */
async function attemptThenRecover(first: (signal: AbortSignal) => unknown) {
  const clock = new SimulatedClock();
  const closed = { count: 0 };
  const model = rawModel([first, generatorOf(RECOVERED, closed)]);
  const agent = createAgent({ model, clock, retry: { maxAttempts: 2, jitter: false } });
  const trusted = await expectTrusted(agent.prompt(PROMPT), [PROMPT], clock);
  return { ...trusted, model, agent };
}

function expectRecoveredFromInvalidResponse({ result, events, agent }: Awaited<ReturnType<typeof attemptThenRecover>>) {
  expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
  expect(result.counters).toMatchObject({ modelCalls: 2, retries: 1, failureCodes: { invalidResponse: 1 } });
  expect(ofType(events, 'retry').map((event) => event.error.kind)).toEqual(['invalidResponse']);
  // The refused attempt published nothing: one message for the logical reply.
  expect(ofType(events, 'messageStart')).toHaveLength(1);
  expect(result.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'recovered' }] });
  expectIdle(agent);
}

const throwingGetter = () => {
  const event = {};
  Object.defineProperty(event, 'type', {
    get: () => {
      throw new Error('getter exploded');
    },
    enumerable: true,
  });
  return event;
};
const explodingProxy = () =>
  new Proxy(
    {},
    {
      get: () => {
        throw new Error('proxy exploded');
      },
      has: () => {
        throw new Error('proxy exploded');
      },
      ownKeys: () => {
        throw new Error('proxy exploded');
      },
    },
  );

const BAD_EVENTS: Array<[string, () => unknown]> = [
  ['a textDelta whose delta is a number', () => ({ type: 'textDelta', delta: 5 })],
  ['an event of an unknown type', () => ({ type: 'mystery', delta: 'x' })],
  ['null', () => null],
  ['a bare string', () => 'textDelta'],
  ['an array', () => ['textDelta', 'x']],
  ['a toolCallStart without a name', () => ({ type: 'toolCallStart', index: 0, id: 'a' })],
  ['a toolCallDelta for index -1', () => ({ type: 'toolCallDelta', index: -1, argumentsDelta: '{}' })],
  ['a toolCallDelta for index 1.5', () => ({ type: 'toolCallDelta', index: 1.5, argumentsDelta: '{}' })],
  ['a done with an unknown stop reason', () => ({ type: 'done', stopReason: 'finished' })],
  ['an error of an unknown kind', () => ({ type: 'error', error: { kind: 'explode', message: 'boom' } })],
  ['an error event without an error', () => ({ type: 'error', error: null })],
  ['usage that is not an object', () => ({ type: 'usage', usage: 'lots' })],
  ['an event whose type getter throws', throwingGetter],
  ['a proxy that throws on every read', explodingProxy],
];

describe('hostile model streams: events of the wrong shape', () => {
  it.each(BAD_EVENTS)(
    '%s ends the attempt as invalidResponse; the retry recovers; the iterator was closed',
    async (_name, bad) => {
      const closed = { count: 0 };
      const outcome = await attemptThenRecover(
        generatorOf(
          [{ type: 'start' }, { type: 'textDelta', delta: 'never shown' }, bad(), { type: 'done', stopReason: 'stop' }],
          closed,
        ),
      );
      expectRecoveredFromInvalidResponse(outcome);
      expect(JSON.stringify(outcome.events)).not.toContain('never shown');
      expect(closed.count).toBe(1);
    },
  );

  it('a second toolCallStart for an open index never glues two calls into one (invalidResponse)', async () => {
    const closed = { count: 0 };
    const outcome = await attemptThenRecover(
      generatorOf(
        [
          { type: 'toolCallStart', index: 0, id: 'a', name: 'write' },
          { type: 'toolCallDelta', index: 0, argumentsDelta: '{"path":' },
          { type: 'toolCallStart', index: 0, id: 'b', name: 'delete' },
          { type: 'toolCallDelta', index: 0, argumentsDelta: '"/"}' },
          { type: 'toolCallEnd', index: 0 },
          { type: 'done', stopReason: 'toolUse' },
        ],
        closed,
      ),
    );
    expectRecoveredFromInvalidResponse(outcome);
    expect(outcome.result.counters.toolCallsRequested).toBe(0);
    expect(closed.count).toBe(1);
  });

  it('when every attempt is invalid the run fails as retryExhausted with error code invalidResponse', async () => {
    const clock = new SimulatedClock();
    const bad = () => generatorOf([{ type: 'textDelta', delta: 42 }], { count: 0 })();
    const model = rawModel([bad, bad]);
    const agent = createAgent({ model, clock, retry: { maxAttempts: 2, jitter: false } });
    const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT], clock);
    expect(result).toMatchObject({ status: 'failed', endReason: 'retryExhausted', error: { code: 'invalidResponse' } });
    expect(result.error?.message).toContain('invalid model response');
    expect(ofType(events, 'messageEnd').map((event) => event.message.stopReason)).toEqual(['error']);
    expect(result.counters).toMatchObject({
      modelCalls: 2,
      retries: 1,
      turnsFailed: 1,
      failureCodes: { invalidResponse: 2 },
    });
  });

  it("with streaming 'live', an invalid event after shown text ends the shown message with an error (no retry)", async () => {
    const clock = new SimulatedClock();
    const model = rawModel([
      generatorOf(
        [
          { type: 'textDelta', delta: 'shown ' },
          { type: 'textDelta', delta: null },
        ],
        { count: 0 },
      ),
      generatorOf(RECOVERED, { count: 0 }),
    ]);
    const agent = createAgent({ model, clock, streaming: 'live', retry: { maxAttempts: 2, jitter: false } });
    const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT], clock);
    // Already shown, so never redone: the retryable failure is final.
    expect(result).toMatchObject({ status: 'failed', endReason: 'retryExhausted', error: { code: 'invalidResponse' } });
    expect(ofType(events, 'messageStart')).toHaveLength(1);
    expect(ofType(events, 'messageEnd')[0]?.message).toMatchObject({
      stopReason: 'error',
      content: [{ type: 'text', text: 'shown ' }],
    });
    expect(model.calls).toBe(1);
  });
});

const STREAM_FAILURES: Array<[string, (signal: AbortSignal) => unknown]> = [
  [
    'model.stream() throws',
    () => {
      throw new Error('stream() exploded');
    },
  ],
  ['model.stream() returns a number', () => 42],
  ['model.stream() returns null', () => null],
  [
    'model.stream() returns a promise of a stream (an async stream())',
    () => Promise.resolve(generatorOf(RECOVERED, { count: 0 })()),
  ],
  ['model.stream() returns a rejected promise', () => Promise.reject(new Error('rejected before streaming'))],
  ['the iterable has no next()', () => ({ [Symbol.asyncIterator]: () => ({}) })],
  [
    'the iterator getter throws',
    () => ({
      get [Symbol.asyncIterator]() {
        throw new Error('no iterator for you');
      },
    }),
  ],
  [
    'next() rejects',
    () => ({
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('socket hang up in user code')) }),
    }),
  ],
  [
    'next() throws synchronously',
    () => ({
      [Symbol.asyncIterator]: () => ({
        next: () => {
          throw new Error('next exploded');
        },
      }),
    }),
  ],
  [
    'next() resolves to a string',
    () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.resolve('garbage') }) }),
  ],
  [
    'next() returns a thenable whose then throws',
    () => ({
      [Symbol.asyncIterator]: () => ({
        next: () => ({
          get then() {
            throw new Error('then exploded');
          },
        }),
      }),
    }),
  ],
  [
    'a generator that throws after its first event',
    () =>
      (async function* () {
        yield { type: 'start' };
        throw new Error('provider SDK bug');
      })(),
  ],
];

describe('hostile model streams: streams that throw, reject or are not iterable', () => {
  it.each(STREAM_FAILURES)('%s: the attempt ends as invalidResponse and the retry recovers', async (_name, first) => {
    expectRecoveredFromInvalidResponse(await attemptThenRecover(first));
  });

  it('a synchronous iterable of valid events is accepted', async () => {
    const model = rawModel([() => TEXT('from an array')]);
    const agent = createAgent({ model });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result).toMatchObject({
      status: 'completed',
      messages: [{ role: 'user' }, { role: 'assistant', content: [{ type: 'text', text: 'from an array' }] }],
    });
  });
});

describe('hostile model streams: the end of a stream', () => {
  it('events after done are ignored and the generator is closed (its finally runs)', async () => {
    const closed = { count: 0 };
    const model = rawModel([
      generatorOf(
        [
          ...TEXT('answer'),
          { type: 'textDelta', delta: 'AFTER-DONE' },
          { type: 'error', error: { kind: 'auth', message: 'late' } },
        ],
        closed,
      ),
    ]);
    const agent = createAgent({ model });
    const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result.status).toBe('completed');
    expect(JSON.stringify(events)).not.toContain('AFTER-DONE');
    expect(closed.count).toBe(1);
  });

  it('events after an error are ignored and the generator is closed', async () => {
    const closed = { count: 0 };
    const model = rawModel([
      generatorOf(
        [
          { type: 'textDelta', delta: 'partial' },
          { type: 'error', error: { kind: 'badRequest', message: 'bad' } },
          { type: 'textDelta', delta: 'AFTER-ERROR' },
        ],
        closed,
      ),
    ]);
    const agent = createAgent({ model });
    const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result).toMatchObject({ status: 'failed', endReason: 'fatalError', error: { code: 'badRequest' } });
    expect(JSON.stringify(events)).not.toContain('AFTER-ERROR');
    expect(closed.count).toBe(1);
  });

  it('a stream that ignores its signal and never ends is closed by abort(): the run settles within a macrotask', async () => {
    const closed = { count: 0 };
    const model = rawModel([
      () =>
        (async function* () {
          try {
            yield { type: 'textDelta', delta: 'thinking…' };
            await new Promise(() => {});
          } finally {
            closed.count++;
          }
        })(),
    ]);
    const agent = createAgent({ model });
    const run = agent.prompt(PROMPT);
    await macrotasks(3);
    const flag = settledFlag(run.result);
    agent.abort('user pressed stop');
    await macrotasks(1);
    expect(flag.settled).toBe(true);
    const { result } = await expectTrusted(run, [PROMPT]);
    expect(result).toMatchObject({ status: 'aborted', error: { code: 'aborted', message: 'user pressed stop' } });
  });

  it('an iterator whose return() throws or rejects does not break the run', async () => {
    const iterator = (reject: boolean) => {
      const values = [...TEXT('done')];
      return {
        [Symbol.asyncIterator]: () => ({
          next: () =>
            Promise.resolve(values.length ? { done: false, value: values.shift() } : { done: true, value: undefined }),
          return: () => {
            if (reject) return Promise.reject(new Error('return rejected'));
            throw new Error('return threw');
          },
        }),
      };
    };
    for (const rejects of [true, false]) {
      const agent = createAgent({ model: rawModel([() => iterator(rejects)]) });
      const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
      expect(result.status).toBe('completed');
    }
  });

  it('a toolCallEnd or toolCallDelta for an index that never started does not break the reply', async () => {
    const model = rawModel([generatorOf([{ type: 'toolCallEnd', index: 7 }, ...TEXT('fine')], { count: 0 })]);
    const agent = createAgent({ model });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result.status).toBe('completed');
  });
});

const BAD_USAGE: Array<[string, unknown]> = [
  ['NaN', Number.NaN],
  ['a negative number', -5],
  ['a string', 'lots'],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['a fraction', 1.5],
  ['a number beyond 2^53', 1e300],
  ['null', null],
  ['an object', { tokens: 3 }],
];

describe('hostile model streams: usage', () => {
  it.each(BAD_USAGE)(
    'a usage count of %s counts as 0 (counters never NaN, negative or strings)',
    async (_name, bad) => {
      const usage = { input: bad, output: 4, cacheRead: bad, cacheWrite: bad };
      const model = {
        ...rawModel([generatorOf([{ type: 'usage', usage }, ...TEXT('ok')], { count: 0 })]),
        pricing: { input: 1, output: 2 },
      };
      const agent = createAgent({ model });
      const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
      expect(result.counters).toMatchObject({ tokensIn: 0, tokensOut: 4, tokensCacheRead: 0, tokensCacheWrite: 0 });
      expect(result.counters.costUsd).toBeCloseTo(8e-6);
      expect(result.messages.at(-1)).toMatchObject({ usage: { input: 0, output: 4, cacheRead: 0, cacheWrite: 0 } });
    },
  );

  it('the stored session with sanitized usage loads again', async () => {
    const { memoryStore } = await import('agentchart');
    const store = memoryStore();
    const model = rawModel([
      generatorOf([{ type: 'usage', usage: { input: 'lots', output: Number.NaN } }, ...TEXT('ok')], { count: 0 }),
    ]);
    const agent = createAgent({ model, store, sessionId: 's1' });
    await agent.ready;
    await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    await agent.flush();
    await agent.close();
    const again = createAgent({ model: rawModel([]), store, sessionId: 's1' });
    await again.ready;
    expect(again.counters).toMatchObject({ tokensIn: 0, tokensOut: 0 });
    expect(again.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
  });
});

describe('hostile model streams: error events', () => {
  it('a garbage retryAfterMs is dropped: the retry waits the exponential backoff, not NaN', async () => {
    const outcome = await attemptThenRecover(
      generatorOf([{ type: 'error', error: { kind: 'rateLimit', message: 'slow down', retryAfterMs: 'soon' } }], {
        count: 0,
      }),
    );
    expect(ofType(outcome.events, 'retry').map((event) => event.delayMs)).toEqual([1_000]);
    expect(outcome.result.counters.backoffMs).toBe(1_000);
  });

  it('a huge retryAfterMs is clamped to retry.maxRetryAfterMs', async () => {
    const clock = new SimulatedClock();
    const model = rawModel([
      generatorOf([{ type: 'error', error: { kind: 'overloaded', message: 'later', retryAfterMs: 1e15 } }], {
        count: 0,
      }),
      generatorOf(RECOVERED, { count: 0 }),
    ]);
    const agent = createAgent({ model, clock, retry: { maxAttempts: 2, maxRetryAfterMs: 5_000 } });
    const { events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT], clock);
    expect(ofType(events, 'retry').map((event) => event.delayMs)).toEqual([5_000]);
  });

  it('an error event given retryable: true for a fatal kind is not trusted: the kind decides (no retry)', async () => {
    const model = rawModel([
      generatorOf([{ type: 'error', error: { kind: 'auth', message: 'bad key', retryable: true } }], { count: 0 }),
    ]);
    const agent = createAgent({ model, retry: { maxAttempts: 3 } });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result).toMatchObject({ status: 'failed', endReason: 'fatalError', error: { code: 'auth' } });
    expect(model.calls).toBe(1);
  });

  it('a tool call completed before the stream broke still gets a result (parity)', async () => {
    const read = defineTool({
      name: 'read',
      description: 'reads',
      parameters: z.object({ path: z.string() }),
      execute: () => 'content',
    });
    const model = rawModel([
      generatorOf([...CALL('c1', 'read', '{"path":"a"}'), { type: 'textDelta', delta: 7 }], { count: 0 }),
    ]);
    const agent = createAgent({ model, tools: [read], retry: { maxAttempts: 1 } });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result).toMatchObject({ status: 'failed', error: { code: 'invalidResponse' } });
    expect(result.messages.filter((message) => message.role === 'toolResult')).toMatchObject([
      { toolCallId: 'c1', isError: true },
    ]);
  });
});

// Type-level: a test double written against the port still type-checks with the schema's type.
export const sample: ModelStreamEvent = { type: 'usage', usage: { input: 1, output: 2 } };

/** A LanguageModelV3 that streams the given parts (a provider of the AI SDK, hand-made and hostile). */
function languageModel(parts: unknown[], cancelled: { count: number }, hold = false) {
  return {
    specificationVersion: 'v3' as const,
    provider: 'fake.chat',
    modelId: 'fake-model',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream: () =>
      Promise.resolve({
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            if (!hold) controller.close();
          },
          cancel() {
            cancelled.count++;
          },
        }),
      }),
  };
}

const FINISH = {
  type: 'finish',
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage: { inputTokens: { total: 3 }, outputTokens: { total: 2 } },
};

describe('hostile providers behind fromAISDK', () => {
  it('the same tool-call id started twice while open is refused (invalidResponse), never glued', async () => {
    const { fromAISDK } = await import('agentchart/ai-sdk');
    const remove = defineTool({
      name: 'remove',
      description: 'removes',
      parameters: z.object({ path: z.string() }),
      execute: ({ path }) => `REMOVED ${path}`,
    });
    const parts = [
      { type: 'stream-start', warnings: [] },
      { type: 'tool-input-start', id: 'a', toolName: 'remove' },
      { type: 'tool-input-delta', id: 'a', delta: '{"path":' },
      { type: 'tool-input-start', id: 'a', toolName: 'remove' },
      { type: 'tool-input-delta', id: 'a', delta: '"/"}' },
      { type: 'tool-input-end', id: 'a' },
      FINISH,
    ];
    const agent = createAgent({
      model: fromAISDK(languageModel(parts, { count: 0 }) as never),
      tools: [remove],
      retry: { maxAttempts: 1 },
    });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result).toMatchObject({ status: 'failed', error: { code: 'invalidResponse' } });
    expect(JSON.stringify(result.messages)).not.toContain('REMOVED');
  });

  it('an error part: the provider stream is cancelled (the HTTP body released) even though it stays open', async () => {
    const { fromAISDK } = await import('agentchart/ai-sdk');
    const cancelled = { count: 0 };
    const parts = [
      { type: 'stream-start', warnings: [] },
      { type: 'text-delta', id: 't', delta: 'partial' },
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    ];
    const agent = createAgent({
      model: fromAISDK(languageModel(parts, cancelled, true) as never),
      retry: { maxAttempts: 1 },
    });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result).toMatchObject({ status: 'failed', error: { code: 'overloaded' } });
    expect(cancelled.count).toBe(1);
  });
});
