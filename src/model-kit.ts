// agentchart/model-kit: the pieces under the agent, for authors of a model adapter and of a loop of
// their own: the model port and its stream, error kinds and how provider failures map onto them,
// prices, and how a tool call is checked and run.

// The model port and its stream.
export type { Model, ModelRequest, ModelStreamEvent, ModelPricing, ToolSpec } from './model/port.js';
export { ModelStreamEventSchema } from './model/stream-events.js';
export { StreamAccumulator } from './model/accumulator.js';
export type { StreamTerminal, InvalidToolCall } from './model/accumulator.js';

// Errors: a failed attempt is a ModelError of one kind; the kind decides whether it is retried.
export { modelError, isRetryableKind } from './domain/errors.js';
export type { ModelError, ErrorKind } from './domain/errors.js';
export {
  classifyProviderFailure,
  classifyTransportFailure,
  retryAfterMsFrom,
  isContextOverflowText,
} from './model/classify-http.js';
export type { ProviderFailure, HeaderSource } from './model/classify-http.js';

// Prices: the cost counter of a reply's usage.
export { costOf } from './model/port.js';
export { DEFAULT_PRICES, lookupPricing } from './model/pricing.js';
export type { PriceTable } from './model/pricing.js';

// Tool calls: the registry the model's tool specs come from, argument checking, running a tool.
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
export { TOOL_NAME_PATTERN } from './tools/define.js';

// A loop of your own: the events it publishes (without runId and seq) and its counters.
export type { AgentEventBody, MessageDelta } from './domain/events.js';
export { zeroCounters } from './domain/counters.js';
