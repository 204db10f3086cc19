// agentchart/ai-sdk: wraps any Vercel AI SDK language model. Kept out of the core so the AI SDK stays optional.
export { fromAISDK } from './model/ai-sdk.js';
export type { FromAISDKOptions, AISDKCallSettings, AISDKLanguageModel } from './model/ai-sdk.js';
