// The public face of agentchart. Consumers import from 'agentchart' only.
export * from './domain/index.js';
export type { Model, ModelRequest, ModelStreamEvent, ModelPricing, ToolSpec } from './model/port.js';
export { costOf } from './model/port.js';
export type { Tool, AnyTool, ToolContext, ToolOutput, ToolExecutionHint } from './tools/types.js';
export type { ToolExecution } from './tools/strategy.js';
export type * from './policies/types.js';
