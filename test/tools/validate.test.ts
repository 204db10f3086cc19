import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from 'agentchart';
import { createToolRegistry, prepareToolCall } from 'agentchart/model-kit';

const execute = () => 'ok';
const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a file',
  parameters: z.object({
    path: z.string(),
    encoding: z.enum(['utf8', 'base64']).default('utf8'),
    offset: z.coerce.number().int().default(0),
    options: z.object({ limit: z.number().max(100, 'must be ≤ 100'), tags: z.array(z.string()).optional() }).optional(),
  }),
  execute,
});
const strictRoot = defineTool({
  name: 'pair',
  description: 'Needs a or b',
  parameters: z.object({ a: z.string().optional(), b: z.string().optional() }).refine((v) => v.a ?? v.b, 'give a or b'),
  execute,
});
const many = defineTool({
  name: 'many',
  description: 'Twelve required fields',
  parameters: z.object(Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}`, z.string()]))),
  execute,
});
const registry = createToolRegistry([readFile, strictRoot, many]);
const call = (name: string, args: Record<string, unknown>) => ({ id: 'call_1', name, arguments: args });

function jsonParseError(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected invalid JSON');
}

describe('prepareToolCall', () => {
  it('returns the tool and the parsed arguments with coercions and defaults applied', () => {
    const result = prepareToolCall(registry, call('read_file', { path: 'a.txt', offset: '12', extra: true }));
    expect(result).toEqual({ ok: true, tool: readFile, arguments: { path: 'a.txt', encoding: 'utf8', offset: 12 } });
  });

  it('rejects an unknown tool and lists the available ones in registration order', () => {
    expect(prepareToolCall(registry, call('write_file', {}))).toEqual({
      ok: false,
      kind: 'unknownTool',
      message: 'Unknown tool "write_file". Available tools: read_file, pair, many.',
    });
    expect(prepareToolCall(createToolRegistry([]), call('x', {}))).toEqual({
      ok: false,
      kind: 'unknownTool',
      message: 'Unknown tool "x". No tools are available.',
    });
  });

  it('lists every schema issue with its field path', () => {
    const result = prepareToolCall(
      registry,
      call('read_file', { path: 5, encoding: 'latin1', options: { limit: 500, tags: ['a', 7] } }),
    );
    expect(result).toEqual({
      ok: false,
      kind: 'invalidArguments',
      message:
        'Invalid arguments for tool "read_file": path: expected string, received number; ' +
        'encoding: Invalid option: expected one of "utf8"|"base64"; options.limit: must be ≤ 100; ' +
        'options.tags[1]: expected string, received number',
    });
  });

  it('says which fields are missing and which coercions failed', () => {
    expect(prepareToolCall(registry, call('read_file', { offset: 'ten' }))).toEqual({
      ok: false,
      kind: 'invalidArguments',
      message:
        'Invalid arguments for tool "read_file": path: required (expected string); offset: expected number, received NaN',
    });
  });

  it('names root-level issues (root)', () => {
    expect(prepareToolCall(registry, call('pair', {}))).toEqual({
      ok: false,
      kind: 'invalidArguments',
      message: 'Invalid arguments for tool "pair": (root): give a or b',
    });
    expect(prepareToolCall(registry, call('pair', [1] as unknown as Record<string, unknown>))).toEqual({
      ok: false,
      kind: 'invalidArguments',
      message: 'Invalid arguments for tool "pair": (root): expected object, received array',
    });
  });

  it('lists at most ten issues and counts the rest', () => {
    const result = prepareToolCall(registry, call('many', {}));
    const listed = Array.from({ length: 10 }, (_, i) => `f${i}: required (expected string)`).join('; ');
    expect(result).toEqual({
      ok: false,
      kind: 'invalidArguments',
      message: `Invalid arguments for tool "many": ${listed}; and 2 more`,
    });
  });

  it('reports malformed JSON with the parser error', () => {
    const rawArguments = '{"path": "a.txt",';
    expect(prepareToolCall(registry, call('read_file', {}), { rawArguments, invalidReason: 'malformedJson' })).toEqual({
      ok: false,
      kind: 'malformedJson',
      message: `Invalid arguments for tool "read_file": malformed JSON (${jsonParseError(rawArguments)}). Send the arguments as a JSON object.`,
    });
  });

  it('reports JSON that is not an object as malformed', () => {
    expect(
      prepareToolCall(registry, call('read_file', {}), { rawArguments: '["a"]', invalidReason: 'malformedJson' }),
    ).toEqual({
      ok: false,
      kind: 'malformedJson',
      message:
        'Invalid arguments for tool "read_file": malformed JSON (expected a JSON object, got an array). Send the arguments as a JSON object.',
    });
    expect(prepareToolCall(registry, call('read_file', {}), { invalidReason: 'malformedJson' })).toEqual({
      ok: false,
      kind: 'malformedJson',
      message:
        'Invalid arguments for tool "read_file": malformed JSON (no arguments text). Send the arguments as a JSON object.',
    });
  });

  it('reports truncated arguments', () => {
    const result = prepareToolCall(registry, call('read_file', {}), {
      rawArguments: '{"path": "a',
      invalidReason: 'truncated',
    });
    expect(result).toEqual({
      ok: false,
      kind: 'truncated',
      message:
        'Arguments truncated for tool "read_file": the output was cut off (stop reason length) before the tool call was complete. Retry with shorter arguments.',
    });
    expect(result.ok === false && result.message.toLowerCase()).toContain('arguments truncated');
  });

  it('checks the tool name before the raw arguments', () => {
    const result = prepareToolCall(registry, call('nope', {}), { rawArguments: '{', invalidReason: 'truncated' });
    expect(result.ok === false && result.kind).toBe('unknownTool');
  });

  it('is deterministic', () => {
    const args = { path: 1, encoding: 2, options: { limit: 'x' } };
    const first = prepareToolCall(registry, call('read_file', args));
    expect(prepareToolCall(registry, call('read_file', args))).toEqual(first);
  });
});
