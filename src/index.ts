// The public face of agentchart: what an application author uses to build, run and watch an agent.
// Kits for other authors live on subpaths: agentchart/store-kit (session stores), agentchart/trace
// (trace recording and the viewer), agentchart/model-kit (model adapters and hand-written loops),
// agentchart/testing. A test pins this list (test/package/root-exports.test.ts): growing it is a decision.

// The agent.
export { createAgent } from './runtime/agent.js';
export type { Agent, AgentRun, AgentSnapshot, DurableOptions, SteerReceipt } from './runtime/agent.js';
export type { AgentOptions, RetryOptions, TimeoutOptions } from './runtime/options.js';
export type { AgentObserver, ObservedAgent } from './runtime/observer.js';
export { AgentError } from './domain/errors.js';
export type { AgentErrorCode } from './domain/errors.js';
export type { RunResult, FinalReport } from './domain/outcomes.js';
export type { RunStatus, EndReason, AgentEvent, AgentEventType, AgentEventOf } from './domain/events.js';
export type { Counters } from './domain/counters.js';
export { INTERRUPTED_BY_RESTART } from './runtime/resume.js';

// Messages.
export { textOf, toolCallsOf } from './domain/messages.js';
export type {
  Message,
  MessageInput,
  UserMessage,
  AssistantMessage,
  ToolResultMessage,
  CustomMessage,
  AssistantBlock,
  ToolCallBlock,
  Usage,
} from './domain/messages.js';

// The model port (adapters: agentchart/openai, agentchart/anthropic, agentchart/ai-sdk; writing one: agentchart/model-kit).
export type { Model, ModelRequest, ModelStreamEvent } from './model/port.js';

// Tools.
export { defineTool } from './tools/define.js';
export { jsonSchemaParameters } from './tools/json-schema-parameters.js';
export type { JsonSchemaCheck, StandardIssue } from './tools/json-schema-parameters.js';
export { TOOL_SOURCE } from './tools/tool-source.js';
export type { ToolSource } from './tools/tool-source.js';
export type {
  Tool,
  AnyTool,
  JsonSchemaTool,
  ToolContext,
  ToolOutput,
  ElicitationRequest,
  ElicitationAnswer,
} from './tools/types.js';
export type { ToolParameters, ToolArguments } from './tools/schema.js';
export type { ToolExecution } from './tools/strategy.js';

// Policies and approvals.
export type {
  Policies,
  PreTurnPolicy,
  PreDispatchPolicy,
  PostTurnPolicy,
  PostLoopPolicy,
  LoopPolicyContext,
  PreDispatchContext,
  PostTurnContext,
  Verdict,
  PreDispatchVerdict,
  PostTurnVerdict,
  ApprovalRequest,
  ApprovalDecision,
  ApprovalHandler,
  ApprovalMode,
} from './policies/types.js';

// The context window: helpers for a `context.transform` of your own.
export { compactMessages } from './context/compact.js';
export type { CompactOptions } from './context/compact.js';
export { checkToolParity } from './context/parity.js';
export type { ContextTransform } from './context/guard.js';

// Durable sessions and their forks (SQLite: agentchart/sqlite, PostgreSQL: agentchart/postgres; writing a
// store: agentchart/store-kit).
export { memoryStore } from './store/memory.js';
export { forkSession } from './store/fork.js';
export type { ForkOptions, ForkResult } from './store/fork.js';
export type { SessionStore, SessionSummary, PendingApproval } from './store/types.js';
