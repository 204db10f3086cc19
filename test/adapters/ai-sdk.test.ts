import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { fromAISDK } from 'agentchart/ai-sdk';
import { anthropicWire } from './anthropic-wire.js';
import { describeConformance } from './conformance.js';
import { openAIWire } from './openai-wire.js';

// The AI SDK names tool calls by id; the adapter numbers them in order of appearance.
const ordinalToolIndex = (_reply: unknown, i: number) => i;

describeConformance({
  name: 'fromAISDK(@ai-sdk/anthropic)',
  wire: anthropicWire,
  clientTimeout: false,
  toolIndex: ordinalToolIndex,
  createModel: (server, options = {}) =>
    fromAISDK(createAnthropic({ baseURL: `${server.url}/v1`, apiKey: 'sk-ant-test' })(anthropicWire.requestModel), options),
});

describeConformance({
  name: 'fromAISDK(@ai-sdk/openai-compatible)',
  wire: openAIWire,
  clientTimeout: false,
  toolIndex: ordinalToolIndex,
  createModel: (server, options = {}) =>
    fromAISDK(
      createOpenAICompatible({ name: 'local', baseURL: `${server.url}/v1`, apiKey: 'sk-test', includeUsage: true })(openAIWire.requestModel),
      options,
    ),
});
