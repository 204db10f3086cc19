import { AgentError } from '../domain/errors.js';
import { parametersJsonSchema } from './json-schema.js';
import { describeValue, type ToolArguments, type ToolParameters } from './schema.js';
import type { AnyTool, Tool, ToolContext, ToolExecutionHint, ToolOutput } from './types.js';

/** The names providers accept for tools (OpenAI's and Anthropic's common rule). */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

export interface ToolDefinition<Params extends ToolParameters> {
  name: string;
  description: string;
  /**
   * A zod object schema, or any Standard Schema of an object with a JSON Schema (valibot, arktype, …);
   * the model sees its JSON Schema, `execute` gets its validated output.
   */
  parameters: Params;
  /** Ask for approval before running in 'smart' approval mode. Default false. */
  requiresApproval?: boolean;
  /** A progress-report tool: its calls never make a report-mode turn a success. Default false. */
  progress?: boolean;
  /** After a crash while running: 'never' re-run (default) or 'safe' to re-run. */
  replay?: 'never' | 'safe';
  execution?: ToolExecutionHint;
  /** Aborts a call still running after this many ms, on the agent's clock; the result is `timed out after N ms`. */
  timeoutMs?: number;
  execute(args: ToolArguments<Params>, ctx: ToolContext): ToolOutput | Promise<ToolOutput>;
}

/**
 * Defines a tool. Validates the definition eagerly (name, parameters, flags, JSON Schema form) so
 * mistakes surface where the tool is written, as `AgentError('InvalidOptions')`.
 */
export function defineTool<Params extends ToolParameters>(definition: ToolDefinition<Params>): Tool<Params> {
  if (typeof definition !== 'object' || definition === null) {
    throw new AgentError('InvalidOptions', 'defineTool: expected a tool definition object.');
  }
  const tool: Tool<Params> = {
    name: definition.name,
    description: definition.description,
    parameters: definition.parameters,
    requiresApproval: definition.requiresApproval ?? false,
    progress: definition.progress ?? false,
    replay: definition.replay ?? 'never',
    ...(definition.execution !== undefined ? { execution: definition.execution } : {}),
    ...(definition.timeoutMs !== undefined ? { timeoutMs: definition.timeoutMs } : {}),
    execute: definition.execute,
  };
  assertValidTool(tool as unknown as AnyTool);
  return Object.freeze(tool);
}

/**
 * Checks a tool's shape; also used by the registry for tools built without `defineTool`.
 * Throws `AgentError('InvalidOptions')` naming the tool and the offending field.
 */
export function assertValidTool(tool: AnyTool): void {
  if (typeof tool !== 'object' || tool === null) {
    throw new AgentError('InvalidOptions', `Invalid tool: expected an object, got ${describeValue(tool)}.`);
  }
  const { name } = tool as { name: unknown };
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    throw new AgentError(
      'InvalidOptions',
      `Invalid tool name ${typeof name === 'string' ? JSON.stringify(name) : describeValue(name)}: ` +
        'a tool name must be 1 to 64 characters of letters, digits, "_" or "-" (/^[a-zA-Z0-9_-]{1,64}$/).',
    );
  }
  const invalid = (field: string, expected: string, value: unknown): AgentError =>
    new AgentError('InvalidOptions', `Tool "${name}": ${field} must be ${expected}, got ${describeValue(value)}.`);
  if (typeof tool.description !== 'string') throw invalid('description', 'a string', tool.description);
  if (typeof tool.execute !== 'function') throw invalid('execute', 'a function', tool.execute);
  if (typeof tool.requiresApproval !== 'boolean') throw invalid('requiresApproval', 'a boolean', tool.requiresApproval);
  if (typeof tool.progress !== 'boolean') throw invalid('progress', 'a boolean', tool.progress);
  if (tool.replay !== 'never' && tool.replay !== 'safe') throw invalid('replay', `'never' or 'safe'`, tool.replay);
  if (tool.execution !== undefined && tool.execution !== 'parallel' && tool.execution !== 'sequential') {
    throw invalid('execution', `'parallel' or 'sequential'`, tool.execution);
  }
  const { timeoutMs } = tool;
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs >= 1 && timeoutMs <= 2 ** 31 - 1)) {
    throw invalid('timeoutMs', 'a number of milliseconds from 1 to 2147483647', tool.timeoutMs);
  }
  // Also checks the parameters: a usable schema of an object with a JSON Schema.
  parametersJsonSchema(name, tool.parameters);
}
