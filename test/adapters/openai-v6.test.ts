import { openAICompatible } from 'agentchart/openai';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { collect, describeConformance } from './conformance.js';
import { openAIHarness } from './harnesses.js';
import { openAIWire } from './openai-wire.js';
import { ProtocolServer, sse } from './protocol-server.js';
import { sseText } from './wire.js';

// The adapter's `import('openai')` gets openai 6 (a devDependency under the alias openai-v6): the
// same conformance suite runs against the previous major of the SDK.
vi.mock('openai', () => import('openai-v6'));

describeConformance({ ...openAIHarness, name: 'openAICompatible on openai 6' });

let server: ProtocolServer;
beforeAll(async () => {
  server = await ProtocolServer.start();
});
afterAll(async () => {
  await server.close();
});

it('really speaks through openai 6 (its User-Agent), also with no key for a local server', async () => {
  vi.stubEnv('OPENAI_API_KEY', '');
  server.respondWith(sse(sseText(openAIWire.events({ text: ['ok'], finish: 'stop', usage: { input: 1, output: 1 } }))));
  const events = await collect(openAICompatible({ baseURL: `${server.url}/v1`, model: 'llama3.1:8b' }));
  vi.unstubAllEnvs();
  expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'stop' });
  expect(server.requests[0]?.headers['user-agent']).toMatch(/^OpenAI\/JS 6\./);
  expect(server.requests[0]?.headers.authorization).toBeUndefined();
});
