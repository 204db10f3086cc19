import type { AnyTool } from './types.js';

/**
 * A set of tools whose list can change while an agent lives (an MCP server's tools). The agent
 * re-reads it at the start of each turn — never inside one — and publishes `toolsChanged`.
 */
export interface ToolSource {
  /** Increases each time `tools` changes. */
  readonly version: number;
  /** The tools as they are now; a tool that did not change keeps its object. */
  readonly tools: readonly AnyTool[];
}

/**
 * Tools of a source carry it under this key, so `createAgent({ tools: [...set.tools] })` — a plain
 * array — still lets the agent follow the set's later changes.
 */
export const TOOL_SOURCE: unique symbol = Symbol.for('agentchart.toolSource');

export function toolSourceOf(tool: AnyTool): ToolSource | undefined {
  const source = (tool as { [TOOL_SOURCE]?: unknown })[TOOL_SOURCE];
  return typeof source === 'object' && source !== null && 'tools' in source ? (source as ToolSource) : undefined;
}
