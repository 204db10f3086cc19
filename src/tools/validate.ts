import { z } from 'zod';
import type { ToolRegistry } from './registry.js';
import type { StandardJsonSchemaParameters } from './json-schema-parameters.js';
import type { AnyTool } from './types.js';

/** Why a tool call was rejected before it could start. */
export const ToolCallProblemKindSchema = z.enum(['unknownTool', 'invalidArguments', 'malformedJson', 'truncated']);
export type ToolCallProblemKind = z.infer<typeof ToolCallProblemKindSchema>;

/** A tool call as the model sent it (its arguments already decoded from JSON, `{}` when they could not be). */
export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** What the stream decoder learned about the raw arguments text. */
export interface RawToolCallArguments {
  rawArguments?: string;
  invalidReason?: 'malformedJson' | 'truncated';
}

export type PrepareToolCallResult =
  | { ok: true; tool: AnyTool; arguments: Record<string, unknown> }
  | { ok: false; kind: ToolCallProblemKind; message: string };

/** Beyond this many issues the message says how many more; keeps one bad batch from flooding the context. */
const MAX_LISTED_ISSUES = 10;

/**
 * Resolves a call to its tool and parses its arguments with the tool's schema (coercions and
 * defaults applied). A rejection carries a message the model can act on; it never throws.
 * Order of checks: unknown tool, then truncated, then malformed JSON, then the schema.
 */
export function prepareToolCall(
  registry: ToolRegistry,
  call: ToolCallRequest,
  raw?: RawToolCallArguments,
): PrepareToolCallResult {
  const tool = registry.get(call.name);
  if (tool === undefined) {
    return { ok: false, kind: 'unknownTool', message: unknownToolMessage(call.name, registry.names) };
  }
  if (raw?.invalidReason === 'truncated') {
    return {
      ok: false,
      kind: 'truncated',
      message:
        `Arguments truncated for tool "${call.name}": the output was cut off (stop reason length) ` +
        'before the tool call was complete. Retry with shorter arguments.',
    };
  }
  if (raw?.invalidReason === 'malformedJson') {
    return {
      ok: false,
      kind: 'malformedJson',
      message:
        `Invalid arguments for tool "${call.name}": malformed JSON (${jsonProblem(raw.rawArguments)}). ` +
        'Send the arguments as a JSON object.',
    };
  }
  const parameters = tool.parameters;
  if (!('_zod' in parameters)) return checkStandardArguments(tool, parameters, call);
  const parsed = parameters.safeParse(call.arguments, PARSE_CONTEXT);
  if (parsed.success) return { ok: true, tool, arguments: parsed.data };
  return {
    ok: false,
    kind: 'invalidArguments',
    message: `Invalid arguments for tool "${call.name}": ${formatIssues(parsed.error.issues)}`,
  };
}

/** JSON-Schema-backed parameters: their Standard Schema `validate`, which must answer synchronously. */
function checkStandardArguments(tool: AnyTool, parameters: StandardJsonSchemaParameters, call: ToolCallRequest): PrepareToolCallResult {
  const invalid = (detail: string): PrepareToolCallResult => ({
    ok: false,
    kind: 'invalidArguments',
    message: `Invalid arguments for tool "${call.name}": ${detail}`,
  });
  let result: ReturnType<StandardJsonSchemaParameters['~standard']['validate']>;
  try {
    result = parameters['~standard'].validate(call.arguments);
  } catch (error) {
    return invalid(`the validator threw: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (result instanceof Promise) return invalid('the schema validates asynchronously, which tools do not support');
  if (result.issues === undefined) return { ok: true, tool, arguments: result.value };
  const issues = result.issues.map((issue) => ({
    message: issue.message,
    path: (issue.path ?? []).map((segment) => (typeof segment === 'object' ? segment.key : segment)),
  }));
  return invalid(formatIssues(issues));
}

function unknownToolMessage(name: string, available: readonly string[]): string {
  return available.length === 0
    ? `Unknown tool "${name}". No tools are available.`
    : `Unknown tool "${name}". Available tools: ${available.join(', ')}.`;
}

/** The parser's own words for why the raw text is not a JSON object. */
function jsonProblem(rawArguments: string | undefined): string {
  if (rawArguments === undefined) return 'no arguments text';
  let value: unknown;
  try {
    value = JSON.parse(rawArguments);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  const type = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
  return `expected a JSON object, got ${type}`;
}

/**
 * Wording for the issues zod's default message words loosely; schema-level custom messages still
 * win (zod applies per-parse maps after them). Returning undefined keeps zod's default.
 */
const PARSE_CONTEXT = {
  error(issue: z.core.$ZodRawIssue): string | undefined {
    if (issue.code !== 'invalid_type') return undefined;
    if (issue.input === undefined) return `required (expected ${issue.expected})`;
    return `expected ${issue.expected}, received ${receivedType(issue.input)}`;
  },
};

function receivedType(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'array';
  if (typeof input === 'number' && Number.isNaN(input)) return 'NaN';
  return typeof input;
}

/** `path: message; path: message`, in zod's (schema) order. */
export function formatIssues(issues: ReadonlyArray<{ path: readonly PropertyKey[]; message: string }>): string {
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
  const hidden = issues.length - listed.length;
  return hidden > 0 ? `${listed.join('; ')}; and ${hidden} more` : listed.join('; ');
}

/** `options.limit`, `items[2].name`; the root is `(root)`. */
function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += text === '' ? String(key) : `.${String(key)}`;
  }
  return text;
}
