import { z } from 'zod';
import type { ToolRegistry } from './registry.js';
import type { StandardIssue } from './json-schema-parameters.js';
import { standardPropsOf, zodTypeOf, type ToolParameters } from './schema.js';
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
  const validated = validateArguments(tool.parameters, call.arguments);
  if (validated.ok) return { ok: true, tool, arguments: validated.value };
  const message = `Invalid arguments for tool "${call.name}": ${validated.problem}`;
  return { ok: false, kind: 'invalidArguments', message };
}

type Validated = { ok: true; value: Record<string, unknown> } | { ok: false; problem: string };

/**
 * Validates synchronously: zod through `safeParse` (with our wording of its issues), any other
 * Standard Schema through `~standard.validate`. A schema that throws, validates asynchronously or
 * outputs a non-object is a problem reported to the model, never a crash of the turn.
 */
function validateArguments(parameters: ToolParameters, args: Record<string, unknown>): Validated {
  let result: unknown;
  try {
    const isZod = zodTypeOf(parameters) !== undefined;
    const zodParse = isZod ? (parameters as { safeParse?: unknown }).safeParse : undefined;
    if (typeof zodParse === 'function') {
      const parsed = zodParse.call(parameters, args, PARSE_CONTEXT) as ZodParseResult;
      result = parsed.success ? { value: parsed.data } : { issues: parsed.error.issues };
    } else {
      result = standardPropsOf(parameters)?.validate(args);
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, problem: `the validator threw: ${reason}` };
  }
  if (isThenable(result)) {
    result.then(undefined, () => undefined); // its outcome is not awaited: keep a rejection from going unhandled
    return { ok: false, problem: 'the schema validates asynchronously, which tools do not support' };
  }
  const { issues, value } = (result ?? {}) as { issues?: readonly StandardIssue[]; value?: unknown };
  if (issues) return { ok: false, problem: formatIssues(issues) };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, problem: 'the schema did not output an object' };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

type ZodParseResult =
  { success: true; data: unknown } | { success: false; error: { issues: readonly StandardIssue[] } };

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
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

/** `path: message; path: message`, in the schema's order. */
export function formatIssues(issues: readonly StandardIssue[]): string {
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
  const hidden = issues.length - listed.length;
  return hidden > 0 ? `${listed.join('; ')}; and ${hidden} more` : listed.join('; ');
}

/** `options.limit`, `items[2].name`; the root is `(root)`. Standard Schema segments may be `{ key }`. */
function formatPath(path: StandardIssue['path']): string {
  if (path === undefined || path.length === 0) return '(root)';
  let text = '';
  for (const segment of path) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    if (typeof key === 'number') text += `[${key}]`;
    else text += text === '' ? String(key) : `.${String(key)}`;
  }
  return text;
}
