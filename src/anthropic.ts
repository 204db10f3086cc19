// agentchart/anthropic: the Anthropic Messages adapter. Kept out of the core so `@anthropic-ai/sdk` stays optional.
export { anthropic } from './model/anthropic.js';
export type { AnthropicOptions, AnthropicRequestExtras } from './model/anthropic.js';
