// agentchart/ai-sdk-ui-client: what a chat page (useChat, assistant-ui) imports from agentchart. It holds
// nothing of the server, so a browser bundle takes only this.
export { approvalsAnswered } from './ui-stream/approvals-answered.js';
export type { ChatMessagesLike } from './ui-stream/approvals-answered.js';
