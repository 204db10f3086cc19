import type { AnyTool, ToolContext, ToolOutput } from './types.js';
import { redactSecrets } from '../domain/redact.js';

/** A tool call's normalized outcome, as committed in a tool result message. */
export interface ToolRunResult {
  content: string;
  isError: boolean;
}

/**
 * Runs a tool and normalizes what it returns. Never rejects: a throw, a rejection or an invalid
 * return becomes an error result. A synchronous return skips the extra microtask of an await.
 */
export function runTool(tool: AnyTool, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolRunResult> {
  return Promise.resolve(runToolNow(tool, args, ctx));
}

/** `runTool`, but a tool that returns synchronously gives its result synchronously (no promise at all). */
export function runToolNow(
  tool: AnyTool,
  args: Record<string, unknown>,
  ctx: ToolContext,
): ToolRunResult | Promise<ToolRunResult> {
  let output: ToolOutput | Promise<ToolOutput>;
  try {
    output = tool.execute(args, ctx);
    if (typeof output === 'string') return { content: output, isError: false };
    // Inside the try: reading `then` of a hostile object may throw.
    if (isThenable(output)) return Promise.resolve(output).then(normalizeOutput, errorResult);
  } catch (error) {
    return errorResult(error);
  }
  return normalizeOutput(output);
}

/** Turns a returned value into a result; anything but a string or `{ content, isError? }` is an error. */
export function normalizeOutput(output: unknown): ToolRunResult {
  if (typeof output === 'string') return { content: output, isError: false };
  try {
    if (typeof output === 'object' && output !== null && !Array.isArray(output)) {
      const { content, isError } = output as { content?: unknown; isError?: unknown };
      if (typeof content === 'string') {
        if (isError === undefined || typeof isError === 'boolean') return { content, isError: isError === true };
        return invalid(`isError must be a boolean, got ${typeName(isError)}`);
      }
      return invalid(
        `expected a string or { content: string, isError?: boolean }, got an object whose content is ${typeName(content)}`,
      );
    }
    return invalid(`expected a string or { content: string, isError?: boolean }, got ${typeName(output)}`);
  } catch (error) {
    // A throwing getter or proxy on the returned object.
    return invalid(`reading it threw: ${errorMessage(error)}`);
  }
}

/**
 * The error result for a throw or rejection: the error's message (for a non-Error value, String(value)),
 * secrets redacted: a tool's HTTP client may put a key into the text the model and the log would see.
 */
export function errorResult(error: unknown): ToolRunResult {
  return { content: redactSecrets(errorMessage(error)), isError: true };
}

function errorMessage(error: unknown): string {
  try {
    if (error instanceof Error) return error.message !== '' ? error.message : error.name;
    if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
      return (error as { message: string }).message;
    }
    return String(error);
  } catch {
    return 'unprintable error';
  }
}

function invalid(detail: string): ToolRunResult {
  return { content: `tool returned an invalid result: ${detail}`, isError: true };
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
