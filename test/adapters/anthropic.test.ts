import { anthropic } from 'agentchart/anthropic';
import { anthropicWire } from './anthropic-wire.js';
import { describeConformance } from './conformance.js';

describeConformance({
  name: 'anthropic',
  wire: anthropicWire,
  clientTimeout: true,
  createModel: (server, options = {}) =>
    anthropic({ baseURL: server.url, apiKey: 'sk-ant-test', model: anthropicWire.requestModel, ...options }),
});
