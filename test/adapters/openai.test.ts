import { openAICompatible } from 'agentchart/openai';
import { describeConformance } from './conformance.js';
import { openAIWire } from './openai-wire.js';

describeConformance({
  name: 'openAICompatible',
  wire: openAIWire,
  clientTimeout: true,
  createModel: (server, options = {}) =>
    openAICompatible({ baseURL: `${server.url}/v1`, apiKey: 'sk-test', model: openAIWire.requestModel, ...options }),
});
