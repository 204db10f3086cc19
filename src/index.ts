// The public face of agentchart. Consumers import from 'agentchart' only.
export * from './domain/index.js';
export type { Model, ModelRequest, ModelStreamEvent, ModelPricing, ToolSpec } from './model/port.js';
export { costOf } from './model/port.js';
export type {
  Tool,
  AnyTool,
  JsonSchemaTool,
  ToolContext,
  ToolOutput,
  ToolExecutionHint,
  ElicitationRequest,
  ElicitationAnswer,
} from './tools/types.js';
export type { ToolParameters, ToolArguments } from './tools/schema.js';
export { jsonSchemaParameters } from './tools/json-schema-parameters.js';
export type { StandardJsonSchemaParameters, JsonSchemaCheck, StandardIssue } from './tools/json-schema-parameters.js';
export { TOOL_SOURCE } from './tools/tool-source.js';
export type { ToolSource } from './tools/tool-source.js';
export type { ToolExecution } from './tools/strategy.js';
export type * from './policies/types.js';
export { defineTool, TOOL_NAME_PATTERN } from './tools/define.js';
export type { ToolDefinition } from './tools/define.js';
export { createToolRegistry } from './tools/registry.js';
export type { ToolRegistry } from './tools/registry.js';
export { prepareToolCall, ToolCallProblemKindSchema } from './tools/validate.js';
export type {
  ToolCallProblemKind,
  ToolCallRequest,
  RawToolCallArguments,
  PrepareToolCallResult,
} from './tools/validate.js';
export { runTool } from './tools/run.js';
export type { ToolRunResult } from './tools/run.js';
export { StreamAccumulator } from './model/accumulator.js';
export type { StreamTerminal, InvalidToolCall } from './model/accumulator.js';
export * from './context/index.js';
export { createAgent } from './runtime/agent.js';
export type { Agent, AgentRun, AgentSnapshot, SteerReceipt } from './runtime/agent.js';
export type { AgentOptions, RetryOptions, TimeoutOptions } from './runtime/options.js';
export type { AgentObserver, ObservedAgent } from './runtime/observer.js';
export { ModelStreamEventSchema } from './model/stream-events.js';
export {
  ApprovalDecisionSchema,
  PostTurnVerdictSchema,
  PreDispatchVerdictSchema,
  VerdictSchema,
} from './policies/verdicts.js';
export { backoffDelay } from './runtime/retry.js';
export { DEFAULT_PRICES, lookupPricing } from './model/pricing.js';
export type { PriceTable } from './model/pricing.js';
export {
  classifyProviderFailure,
  classifyTransportFailure,
  retryAfterMsFrom,
  isContextOverflowText,
} from './model/classify-http.js';
export type { ProviderFailure, HeaderSource } from './model/classify-http.js';
export { createTraceRecorder, defaultActorLabel } from './trace/recorder.js';
export type { TraceRecorder, TraceRecorderOptions } from './trace/recorder.js';
export {
  parseTrace,
  TraceFormatError,
  TraceEntrySchema,
  TraceHeaderSchema,
  TRACE_FORMAT,
  TRACE_VERSION,
} from './trace/format.js';
export type { Trace, TraceEntry, TraceEntryOf, TraceHeader, MachineOutlineNode, StateValue } from './trace/format.js';
export { machineOutline } from './trace/outline.js';
export { viewerHtml, machineIdOfSvg } from './trace/viewer-html.js';
export type { ViewerHtmlOptions } from './trace/viewer-html.js';
export type { DurableOptions } from './runtime/agent.js';
export { memoryStore } from './store/memory.js';
export type {
  SessionStore,
  SessionCheckpoint,
  SessionHead,
  SessionStep,
  HistoryChange,
  HistoryRef,
  StoredEvent,
  SessionSummary,
  PendingApproval,
  RunCheckpoint,
  TurnCheckpoint,
  StoreOptions,
} from './store/types.js';
export type { Lease, AcquiredLease, LeaseHolder } from './store/lease.js';
export { acquireLease, renewLease, releasedLease, checkFence, sessionBusy } from './store/lease.js';
export {
  SessionCheckpointSchema,
  SessionHeadSchema,
  HistoryChangeSchema,
  HistoryRefSchema,
  StoredEventSchema,
} from './store/types.js';
export {
  assembleCheckpoint,
  checkStep,
  expandEvents,
  parseHead,
  parseMessage,
  parseStoredEvent,
} from './store/validate.js';
export { INTERRUPTED_BY_RESTART } from './runtime/resume.js';
