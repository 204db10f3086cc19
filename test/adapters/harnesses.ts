import { createAnthropic } from '@ai-sdk/anthropic';
import { createAnthropic as createAnthropicV3 } from '@ai-sdk/anthropic-v3';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createOpenAICompatible as createOpenAICompatibleV3 } from '@ai-sdk/openai-compatible-v2';
import { fromAISDK } from 'agentchart/ai-sdk';
import { anthropic } from 'agentchart/anthropic';
import { openAICompatible } from 'agentchart/openai';
import { anthropicWire } from './anthropic-wire.js';
import type { AdapterHarness } from './conformance.js';
import { openAIWire } from './openai-wire.js';

/** Every adapter, each wired to the local server that speaks its provider's protocol. */
export const openAIHarness: AdapterHarness = {
  name: 'openAICompatible',
  wire: openAIWire,
  clientTimeout: true,
  createModel: (server, options = {}) =>
    openAICompatible({ baseURL: `${server.url}/v1`, apiKey: 'sk-test', model: openAIWire.requestModel, ...options }),
};

export const anthropicHarness: AdapterHarness = {
  name: 'anthropic',
  wire: anthropicWire,
  clientTimeout: true,
  createModel: (server, options = {}) =>
    anthropic({ baseURL: server.url, apiKey: 'sk-ant-test', model: anthropicWire.requestModel, ...options }),
};

// The AI SDK names tool calls by id; the adapter numbers them in order of appearance.
const ordinalToolIndex = (_reply: unknown, i: number) => i;

export const aiSdkAnthropicHarness: AdapterHarness = {
  name: 'fromAISDK(@ai-sdk/anthropic)',
  wire: anthropicWire,
  clientTimeout: false,
  toolIndex: ordinalToolIndex,
  createModel: (server, options = {}) =>
    fromAISDK(
      createAnthropic({ baseURL: `${server.url}/v1`, apiKey: 'sk-ant-test' })(anthropicWire.requestModel),
      options,
    ),
};

export const aiSdkOpenAIHarness: AdapterHarness = {
  name: 'fromAISDK(@ai-sdk/openai-compatible)',
  wire: openAIWire,
  clientTimeout: false,
  toolIndex: ordinalToolIndex,
  createModel: (server, options = {}) =>
    fromAISDK(
      createOpenAICompatible({ name: 'local', baseURL: `${server.url}/v1`, apiKey: 'sk-test', includeUsage: true })(
        openAIWire.requestModel,
      ),
      options,
    ),
};

// The same providers of AI SDK 6 (devDependencies under npm aliases): LanguageModelV3 models.
export const aiSdk6AnthropicHarness: AdapterHarness = {
  ...aiSdkAnthropicHarness,
  name: 'fromAISDK(@ai-sdk/anthropic 3, LanguageModelV3)',
  createModel: (server, options = {}) =>
    fromAISDK(
      createAnthropicV3({ baseURL: `${server.url}/v1`, apiKey: 'sk-ant-test' })(anthropicWire.requestModel),
      options,
    ),
};

export const aiSdk6OpenAIHarness: AdapterHarness = {
  ...aiSdkOpenAIHarness,
  name: 'fromAISDK(@ai-sdk/openai-compatible 2, LanguageModelV3)',
  createModel: (server, options = {}) =>
    fromAISDK(
      createOpenAICompatibleV3({ name: 'local', baseURL: `${server.url}/v1`, apiKey: 'sk-test', includeUsage: true })(
        openAIWire.requestModel,
      ),
      options,
    ),
};

export const ALL_HARNESSES = [
  openAIHarness,
  anthropicHarness,
  aiSdkAnthropicHarness,
  aiSdkOpenAIHarness,
  aiSdk6AnthropicHarness,
  aiSdk6OpenAIHarness,
];
