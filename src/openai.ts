// agentchart/openai: the OpenAI-compatible adapter. Kept out of the core so `openai` stays optional.
export { openAICompatible } from './model/openai.js';
export type { OpenAICompatibleOptions, OpenAIRequestExtras } from './model/openai.js';
