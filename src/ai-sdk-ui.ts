// agentchart/ai-sdk-ui: agentchart runs behind the AI SDK's chat UIs (useChat, assistant-ui, AI Elements).
// The `ai` package is an optional peer, loaded on first use.
export { toUIMessageStream, toUIMessageStreamResponse } from './ui-stream/stream.js';
export type { ToUIMessageStreamOptions, UIMessageStreamResponseInit } from './ui-stream/stream.js';
export type { ApprovalSource } from './ui-stream/run-feed.js';
export type {
  AgentchartDataTypes,
  AgentchartMessageMetadata,
  AgentchartResponseStatus,
  AgentchartUIChunk,
  AgentchartUIMessage,
} from './ui-stream/types.js';
export { chatHandler } from './ui-stream/chat-handler.js';
export type { ChatHandlerOptions, ChatRequestHandler } from './ui-stream/chat-handler.js';
export { nodeListener } from './ui-stream/node-listener.js';
