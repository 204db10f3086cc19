import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { AgentError, type ModelStreamEvent } from 'agentchart';
import { fromAISDK } from 'agentchart/ai-sdk';
import { describe, expect, it } from 'vitest';
import { collect } from './conformance.js';
import { HISTORY_REQUEST, WEATHER_PARAMETERS } from './history.js';

/** A hand-made LanguageModelV3: records its call options and streams the given parts (or a custom stream). */
function fakeModel(
  source: LanguageModelV3StreamPart[] | (() => ReadableStream<LanguageModelV3StreamPart>),
  doStream?: (
    options: LanguageModelV3CallOptions,
  ) => PromiseLike<{ stream: ReadableStream<LanguageModelV3StreamPart> }>,
): LanguageModelV3 & { calls: LanguageModelV3CallOptions[] } {
  const calls: LanguageModelV3CallOptions[] = [];
  const stream = () =>
    typeof source === 'function'
      ? source()
      : new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const part of source) controller.enqueue(part);
            controller.close();
          },
        });
  return {
    specificationVersion: 'v3',
    provider: 'fake.chat',
    modelId: 'gpt-4o-mini',
    supportedUrls: {},
    calls,
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream: (options) => {
      calls.push(options);
      return doStream ? doStream(options) : Promise.resolve({ stream: stream() });
    },
  };
}

const usage = (input: number, output: number, cacheRead?: number, cacheWrite?: number): LanguageModelV3Usage => ({
  inputTokens: { total: input, noCache: undefined, cacheRead, cacheWrite },
  outputTokens: { total: output, text: undefined, reasoning: undefined },
});

const finish = (
  unified: 'stop' | 'tool-calls' | 'length' | 'error',
  tokens = usage(10, 5),
): LanguageModelV3StreamPart => ({
  type: 'finish',
  finishReason: { unified, raw: unified },
  usage: tokens,
});

describe('fromAISDK', () => {
  it('passes the history in the LanguageModelV3 prompt format, with tools, settings and the abort signal', async () => {
    const model = fakeModel([{ type: 'stream-start', warnings: [] }, finish('stop')]);
    const controller = new AbortController();
    await collect(
      fromAISDK(model, { callSettings: { maxOutputTokens: 500, temperature: 0.2 } }),
      controller.signal,
      HISTORY_REQUEST,
    );
    // The request's own signal: the caller's abort and the adapter's idle limit both abort it.
    const passed = model.calls[0]?.abortSignal;
    expect(passed).toBeInstanceOf(AbortSignal);
    expect(model.calls).toEqual([
      {
        maxOutputTokens: 500,
        temperature: 0.2,
        abortSignal: passed,
        toolChoice: { type: 'auto' },
        tools: [
          {
            type: 'function',
            name: 'get_weather',
            description: 'Current weather for a city',
            inputSchema: WEATHER_PARAMETERS,
          },
        ],
        prompt: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Checking both.' },
              { type: 'tool-call', toolCallId: 'call_1', toolName: 'get_weather', input: { city: 'Paris' } },
              { type: 'tool-call', toolCallId: 'call_2', toolName: 'get_weather', input: { city: 'Rome' } },
            ],
          },
          {
            role: 'tool',
            content: [
              {
                type: 'tool-result',
                toolCallId: 'call_1',
                toolName: 'get_weather',
                output: { type: 'text', value: '18°C, sunny' },
              },
              {
                type: 'tool-result',
                toolCallId: 'call_2',
                toolName: 'get_weather',
                output: { type: 'error-text', value: 'upstream timeout' },
              },
            ],
          },
          { role: 'user', content: [{ type: 'text', text: 'Answer in one line.' }] },
          { role: 'user', content: [{ type: 'text', text: 'Go on.' }] },
        ],
      },
    ]);
  });

  it('turns a provider that sends only complete tool calls into start, one delta, end; skips provider-executed calls', async () => {
    const model = fakeModel([
      { type: 'stream-start', warnings: [] },
      { type: 'tool-call', toolCallId: 'ws_1', toolName: 'web_search', input: '{"q":"x"}', providerExecuted: true },
      { type: 'tool-call', toolCallId: 'call_a', toolName: 'get_weather', input: '{"city":"Oslo"}' },
      finish('tool-calls', usage(1500, 40, 400, 100)),
    ]);
    expect(await collect(fromAISDK(model))).toEqual<ModelStreamEvent[]>([
      { type: 'start', model: 'gpt-4o-mini' },
      { type: 'toolCallStart', index: 0, id: 'call_a', name: 'get_weather' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '{"city":"Oslo"}' },
      { type: 'toolCallEnd', index: 0 },
      // input is the uncached part: 1500 total − 400 read − 100 written.
      { type: 'usage', usage: { input: 1000, output: 40, cacheRead: 400, cacheWrite: 100 } },
      { type: 'done', stopReason: 'toolUse' },
    ]);
  });

  it('does not repeat the input of a tool call whose input was streamed', async () => {
    const model = fakeModel([
      { type: 'tool-input-start', id: 'call_a', toolName: 'get_weather' },
      { type: 'tool-input-delta', id: 'call_a', delta: '{"city":' },
      { type: 'tool-input-delta', id: 'call_a', delta: '"Oslo"}' },
      { type: 'tool-call', toolCallId: 'call_a', toolName: 'get_weather', input: '{"city":"Oslo"}' },
      finish('tool-calls'),
    ]);
    expect(await collect(fromAISDK(model))).toEqual<ModelStreamEvent[]>([
      { type: 'start', model: 'gpt-4o-mini' },
      { type: 'toolCallStart', index: 0, id: 'call_a', name: 'get_weather' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '{"city":' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '"Oslo"}' },
      { type: 'toolCallEnd', index: 0 },
      { type: 'usage', usage: { input: 10, output: 5 } },
      { type: 'done', stopReason: 'toolUse' },
    ]);
  });

  it('reports a finish reason of error as an error event', async () => {
    const events = await collect(fromAISDK(fakeModel([{ type: 'text-delta', id: 't', delta: 'Hi' }, finish('error')])));
    expect(events).toEqual([
      { type: 'start', model: 'gpt-4o-mini' },
      { type: 'textDelta', delta: 'Hi' },
      {
        type: 'error',
        error: { kind: 'unknown', message: 'provider finished with an error (error)', retryable: false },
      },
    ]);
  });

  it('ends with error(aborted) on abort even when the provider ignores its abort signal, and cancels its stream', async () => {
    let cancelled = false;
    const model = fakeModel(
      () =>
        new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'Hel' });
          },
          cancel() {
            cancelled = true;
          },
        }),
    );
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    for await (const event of fromAISDK(model).stream(HISTORY_REQUEST, { signal: controller.signal })) {
      events.push(event);
      if (event.type === 'textDelta') controller.abort('stop now');
    }
    expect(events).toEqual([
      { type: 'start', model: 'gpt-4o-mini' },
      { type: 'textDelta', delta: 'Hel' },
      { type: 'error', error: { kind: 'aborted', message: 'stop now', retryable: false } },
    ]);
    expect(cancelled).toBe(true);
  });

  it('ends with error(aborted) on abort while doStream has not answered', async () => {
    const model = fakeModel([], () => new Promise(() => undefined));
    const controller = new AbortController();
    const pending = collect(fromAISDK(model), controller.signal);
    await Promise.resolve();
    controller.abort();
    expect(await pending).toEqual([
      { type: 'error', error: { kind: 'aborted', message: 'aborted', retryable: false } },
    ]);
  });

  it('rejects a model of another specification version with a typed error', () => {
    const legacy = { ...fakeModel([]), specificationVersion: 'v2' } as unknown as LanguageModelV3;
    expect(() => fromAISDK(legacy)).toThrow(AgentError);
    expect(() => fromAISDK(legacy)).toThrow(
      'fromAISDK needs a LanguageModelV3 or LanguageModelV4 (AI SDK 6 or 7 providers); got specificationVersion "v2"',
    );
  });

  it('names the model after its modelId unless told otherwise', () => {
    expect(fromAISDK(fakeModel([])).name).toBe('gpt-4o-mini');
    expect(fromAISDK(fakeModel([]), { name: 'primary' }).name).toBe('primary');
  });
});
