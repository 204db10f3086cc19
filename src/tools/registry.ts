import { AgentError } from '../domain/errors.js';
import type { ToolSpec } from '../model/port.js';
import { assertValidTool } from './define.js';
import { parametersJsonSchema } from './json-schema.js';
import type { AnyTool } from './types.js';

/** The tools of one agent, by name, with their provider specs. */
export interface ToolRegistry {
  /** The tools in registration order. */
  readonly tools: readonly AnyTool[];
  /** The tool names in registration order. */
  readonly names: readonly string[];
  get(name: string): AnyTool | undefined;
  has(name: string): boolean;
  /**
   * The specs sent to the model, in registration order. Computed once: every call returns the
   * same deeply frozen array, so adapters must copy before changing a spec.
   */
  specs(): ToolSpec[];
}

/** Builds a registry; a malformed tool or a duplicate name throws `AgentError('InvalidOptions')`. */
export function createToolRegistry(tools: readonly AnyTool[]): ToolRegistry {
  if (!Array.isArray(tools)) {
    throw new AgentError('InvalidOptions', 'tools must be an array of tools (from defineTool).');
  }
  const byName = new Map<string, AnyTool>();
  for (const tool of tools) {
    assertValidTool(tool);
    if (byName.has(tool.name)) {
      throw new AgentError('InvalidOptions', `Duplicate tool name "${tool.name}": tool names must be unique.`);
    }
    byName.set(tool.name, tool);
  }
  const ordered = Object.freeze([...tools]);
  const names = Object.freeze(ordered.map((tool) => tool.name));
  const specs = Object.freeze(
    ordered.map((tool) =>
      Object.freeze({
        name: tool.name,
        description: tool.description,
        parameters: parametersJsonSchema(tool.name, tool.parameters) as Record<string, unknown>,
      }),
    ),
  ) as ToolSpec[];
  return {
    tools: ordered,
    names,
    get: (name) => byName.get(name),
    has: (name) => byName.has(name),
    specs: () => specs,
  };
}
