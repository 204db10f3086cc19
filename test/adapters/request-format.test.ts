import { AgentError } from 'agentchart';
import { anthropic } from 'agentchart/anthropic';
import { openAICompatible } from 'agentchart/openai';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { anthropicWire } from './anthropic-wire.js';
import { collect } from './conformance.js';
import { HISTORY_REQUEST, WEATHER_PARAMETERS } from './history.js';
import { openAIWire } from './openai-wire.js';
import { ProtocolServer, sse } from './protocol-server.js';
import { sseText } from './wire.js';

let server: ProtocolServer;
beforeAll(async () => {
  server = await ProtocolServer.start();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  server.reset();
  vi.unstubAllEnvs();
});

const OK = { text: ['ok'], finish: 'stop' as const, usage: { input: 1, output: 1 } };

describe('openAICompatible request', () => {
  it('sends the history as Chat Completions messages, streaming with usage, extras passed through', async () => {
    server.respondWith(sse(sseText(openAIWire.events(OK))));
    const model = openAICompatible({
      baseURL: `${server.url}/v1`,
      apiKey: 'sk-test',
      model: 'gpt-4o-mini',
      body: { temperature: 0.2 },
    });
    const events = await collect(model, undefined, HISTORY_REQUEST);
    expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'stop' });
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    expect(request?.body).toEqual({
      temperature: 0.2,
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: 'Checking both.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18°C, sunny' },
        { role: 'tool', tool_call_id: 'call_2', content: 'upstream timeout' },
        { role: 'user', content: 'Answer in one line.' },
        { role: 'user', content: 'Go on.' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Current weather for a city', parameters: WEATHER_PARAMETERS },
        },
      ],
    });
  });

  it('sends no tools field when there are no tools, and null content for a tool-call-only assistant', async () => {
    server.respondWith(sse(sseText(openAIWire.events(OK))));
    const model = openAICompatible({ baseURL: `${server.url}/v1`, apiKey: 'sk-test', model: 'llama3.1:8b' });
    await collect(model, undefined, {
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: [{ type: 'toolCall', id: 'c1', name: 'noop', arguments: {} }],
          stopReason: 'toolUse',
        },
        { role: 'toolResult', toolCallId: 'c1', toolName: 'noop', content: '', isError: false },
      ],
      tools: [],
    });
    expect(server.requests[0]?.body).toEqual({
      model: 'llama3.1:8b',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'noop', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: '' },
      ],
    });
  });

  it('has no price for a model outside the table, so its cost is 0', () => {
    expect(
      openAICompatible({ baseURL: `${server.url}/v1`, apiKey: 'x', model: 'llama3.1:8b' }).pricing,
    ).toBeUndefined();
  });

  it('throws a typed InvalidOptions error when there is neither an API key nor a server', () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    vi.stubEnv('OPENAI_BASE_URL', '');
    expect(() => openAICompatible({ model: 'gpt-4o' })).toThrow(
      new AgentError(
        'InvalidOptions',
        'openAICompatible: no API key: pass apiKey or set OPENAI_API_KEY (a local server given by baseURL needs none).',
      ),
    );
  });

  it('calls a local server given by baseURL without a key and without an Authorization header', async () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    server.respondWith(sse(sseText(openAIWire.events(OK))));
    const events = await collect(openAICompatible({ baseURL: `${server.url}/v1`, model: 'llama3.1:8b' }));
    expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'stop' });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('still sends an Authorization header given in headers when there is no key', async () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    server.respondWith(sse(sseText(openAIWire.events(OK))));
    const headers = { Authorization: 'Bearer proxy' };
    await collect(openAICompatible({ baseURL: `${server.url}/v1`, model: 'llama3.1:8b', headers }));
    expect(server.requests[0]?.headers.authorization).toBe('Bearer proxy');
  });

  it('sends the key as a bearer token when there is one', async () => {
    server.respondWith(sse(sseText(openAIWire.events(OK))));
    await collect(openAICompatible({ baseURL: `${server.url}/v1`, apiKey: 'sk-test', model: 'llama3.1:8b' }));
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-test');
  });
});

describe('anthropic request', () => {
  it('sends the history as Messages turns: tool results merged into one user turn, tool_result blocks first', async () => {
    server.respondWith(sse(sseText(anthropicWire.events(OK))));
    const model = anthropic({
      baseURL: server.url,
      apiKey: 'sk-ant-test',
      model: 'claude-haiku-4-5',
      body: { stop_sequences: ['END'] },
    });
    const events = await collect(model, undefined, HISTORY_REQUEST);
    expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'stop' });
    const [request] = server.requests;
    expect(request?.path).toBe('/v1/messages');
    // SDK 1.x sends the key as a bearer token; older majors used x-api-key.
    expect(request?.headers['x-api-key'] ?? request?.headers.authorization).toMatch(/^(Bearer )?sk-ant-test$/);
    expect(request?.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(request?.headers['x-stainless-retry-count']).toBe('0');
    expect(request?.body).toEqual({
      stop_sequences: ['END'],
      model: 'claude-haiku-4-5',
      max_tokens: 8192,
      system: 'You are terse.',
      stream: true,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking both.' },
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: '18°C, sunny' },
            { type: 'tool_result', tool_use_id: 'call_2', content: 'upstream timeout', is_error: true },
            { type: 'text', text: 'Answer in one line.' },
            { type: 'text', text: 'Go on.' },
          ],
        },
      ],
      tools: [{ name: 'get_weather', description: 'Current weather for a city', input_schema: WEATHER_PARAMETERS }],
    });
  });

  it('honours maxTokens and leaves out empty text and empty tool results', async () => {
    server.respondWith(sse(sseText(anthropicWire.events(OK))));
    const model = anthropic({ baseURL: server.url, apiKey: 'sk-ant-test', model: 'claude-haiku-4-5', maxTokens: 1024 });
    await collect(model, undefined, {
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: '' },
            { type: 'toolCall', id: 'c1', name: 'noop', arguments: {} },
          ],
          stopReason: 'toolUse',
        },
        { role: 'toolResult', toolCallId: 'c1', toolName: 'noop', content: '', isError: false },
        { role: 'user', content: '' },
      ],
      tools: [],
    });
    expect(server.requests[0]?.body).toEqual({
      model: 'claude-haiku-4-5',
      max_tokens: 1024,
      stream: true,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'noop', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1' }] },
      ],
    });
  });

  it('prices a dated snapshot by its base model, and an unlisted successor not at all', () => {
    const haiku = anthropic({ apiKey: 'k', model: 'claude-haiku-4-5-20251001' });
    expect(haiku.pricing).toEqual({ input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 });
    expect(anthropic({ apiKey: 'k', model: 'claude-opus-4-7' }).pricing).toBeUndefined();
  });
});
