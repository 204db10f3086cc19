import { openAICompatible } from 'agentchart/openai';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { collect } from './conformance.js';
import { ProtocolServer, sse } from './protocol-server.js';

/** What OpenAI-compatible servers (Ollama, llama.cpp, vLLM, Mistral) send differently from OpenAI. */
let server: ProtocolServer;
beforeAll(async () => {
  server = await ProtocolServer.start();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  server.reset();
});

const chunk = (
  delta: Record<string, unknown>,
  finishReason: string | null = null,
  extra: Record<string, unknown> = {},
) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'qwen3:8b', choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`;

it('reads Ollama-style `reasoning`, a whole tool call in one chunk without an id, and finish_reason stop with tool calls', async () => {
  server.respondWith(
    sse([
      chunk({ role: 'assistant', content: '', reasoning: 'Need the weather.' }),
      chunk({ tool_calls: [{ index: 0, function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] }),
      // Older Ollama says "stop" even when it called tools; no usage chunk either.
      chunk({}, 'stop'),
      'data: [DONE]\n\n',
    ]),
  );
  const model = openAICompatible({ baseURL: `${server.url}/v1`, apiKey: 'ollama', model: 'qwen3:8b' });
  expect(await collect(model)).toEqual([
    { type: 'start', model: 'qwen3:8b' },
    { type: 'thinkingDelta', delta: 'Need the weather.' },
    { type: 'toolCallStart', index: 0, id: 'call_0', name: 'get_weather' },
    { type: 'toolCallDelta', index: 0, argumentsDelta: '{"city":"Oslo"}' },
    { type: 'toolCallEnd', index: 0 },
    { type: 'done', stopReason: 'toolUse' },
  ]);
});

it('keeps arguments that arrive before the tool name, and usage reported on the finish chunk', async () => {
  server.respondWith(
    sse([
      chunk({ tool_calls: [{ index: 0, id: 'call_x', function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { name: 'get_weather', arguments: '"Oslo"}' } }] }),
      chunk({}, 'tool_calls', { usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } }),
    ]),
  );
  const model = openAICompatible({ baseURL: `${server.url}/v1`, apiKey: 'x', model: 'qwen3:8b' });
  expect(await collect(model)).toEqual([
    { type: 'start', model: 'qwen3:8b' },
    { type: 'toolCallStart', index: 0, id: 'call_x', name: 'get_weather' },
    { type: 'toolCallDelta', index: 0, argumentsDelta: '{"city":' },
    { type: 'toolCallDelta', index: 0, argumentsDelta: '"Oslo"}' },
    { type: 'toolCallEnd', index: 0 },
    { type: 'usage', usage: { input: 11, output: 7 } },
    { type: 'done', stopReason: 'toolUse' },
  ]);
});
