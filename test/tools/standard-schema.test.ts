import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { type } from 'arktype';
import * as v from 'valibot';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import * as zm from 'zod/mini';
import { z as z4 } from 'zod/v4';
import * as z4m from 'zod/v4-mini';
import { defineTool, type AnyTool, type ToolParameters } from 'agentchart';
import { createToolRegistry, prepareToolCall } from 'agentchart/model-kit';
import { agentErrorMessage } from '../support/errors.js';

const execute = () => 'ok';
const call = (name: string, args: Record<string, unknown>) => ({ id: 'call_1', name, arguments: args });
const specOf = (tool: AnyTool) => createToolRegistry([tool]).specs()[0]?.parameters;

const invalidOptionsMessage = (run: () => unknown) => agentErrorMessage('InvalidOptions', run);

/** A hand-written Standard Schema, to reach the cases no library ships (async, throwing, odd output). */
function handSchema(
  validate: (value: unknown) => unknown,
  jsonSchema: () => Record<string, unknown> = () => ({ type: 'object', properties: {} }),
): ToolParameters {
  return {
    '~standard': { version: 1, vendor: 'hand', validate, jsonSchema: { input: jsonSchema, output: jsonSchema } },
  } as ToolParameters;
}

const PATH_SCHEMA = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };

describe('zod entry points', () => {
  it.each([
    ['zod', z.object({ path: z.string() })],
    ['zod/v4', z4.object({ path: z4.string() })],
    ['zod/mini', zm.object({ path: zm.string() })],
    ['zod/v4-mini', z4m.object({ path: z4m.string() })],
  ])('accepts a %s object: same JSON Schema, same validation', (_entry, parameters) => {
    const tool = defineTool({ name: 'read', description: 'd', parameters, execute });
    expect(specOf(tool)).toEqual(PATH_SCHEMA);
    const registry = createToolRegistry([tool]);
    expect(prepareToolCall(registry, call('read', { path: 'a' }))).toMatchObject({
      ok: true,
      arguments: { path: 'a' },
    });
    expect(prepareToolCall(registry, call('read', {}))).toEqual({
      ok: false,
      kind: 'invalidArguments',
      message: 'Invalid arguments for tool "read": path: required (expected string)',
    });
  });
});

describe('valibot (Standard Schema + @valibot/to-json-schema)', () => {
  const parameters = toStandardJsonSchema(
    v.object({
      path: v.string(),
      limit: v.optional(v.pipe(v.number(), v.maxValue(100)), 10),
      opts: v.optional(v.object({ depth: v.pipe(v.number(), v.integer()) })),
    }),
  );
  const tool = defineTool({
    name: 'read',
    description: 'd',
    parameters,
    execute(args) {
      expectTypeOf(args).toEqualTypeOf<{ path: string; limit: number; opts?: { depth: number } | undefined }>();
      return args.path;
    },
  });
  const registry = createToolRegistry([tool]);

  it('sends the schema’s own JSON Schema of the input side, as the library gives it', () => {
    expect(specOf(tool)).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        path: { type: 'string' },
        limit: { type: 'number', maximum: 100, default: 10 },
        opts: { type: 'object', properties: { depth: { type: 'integer' } }, required: ['depth'] },
      },
      required: ['path'],
    });
  });

  it('validates through ~standard.validate: defaults applied, issues listed with their paths', () => {
    expect(prepareToolCall(registry, call('read', { path: 'a.txt' }))).toEqual({
      ok: true,
      tool,
      arguments: { path: 'a.txt', limit: 10 },
    });
    expect(prepareToolCall(registry, call('read', { path: 1, limit: 500, opts: { depth: 1.5 } }))).toEqual({
      ok: false,
      kind: 'invalidArguments',
      message:
        'Invalid arguments for tool "read": path: Invalid type: Expected string but received 1; ' +
        'limit: Invalid value: Expected <=100 but received 500; opts.depth: Invalid integer: Received 1.5',
    });
  });

  it('rejects a valibot schema without a JSON Schema, saying what it needs', () => {
    const definition = { name: 'read', description: 'd', parameters: v.object({ path: v.string() }), execute };
    expect(invalidOptionsMessage(() => defineTool(definition as never))).toBe(
      'Tool "read": parameters is a valibot schema without a JSON Schema, which the model needs to see the tool; give a zod ' +
        'object schema (z.object({...})) or a Standard Schema of an object with a JSON Schema (~standard.jsonSchema: valibot ' +
        'via toStandardJsonSchema from @valibot/to-json-schema, arktype, jsonSchemaParameters(schema), …).',
    );
  });

  it('reports a schema the converter cannot express', () => {
    const parameters = toStandardJsonSchema(v.object({ when: v.date() }));
    expect(invalidOptionsMessage(() => defineTool({ name: 'when', description: 'd', parameters, execute }))).toBe(
      'Tool "when": parameters cannot be expressed as JSON Schema (The "date" schema cannot be converted to JSON Schema.). ' +
        'Use JSON-compatible schema types.',
    );
  });
});

describe('arktype (a schema that is a function, with ~standard.jsonSchema)', () => {
  const parameters = type({ path: 'string', 'opts?': { limit: 'number <= 100' } });
  const tool = defineTool({
    name: 'read',
    description: 'd',
    parameters,
    execute(args) {
      expectTypeOf(args).toEqualTypeOf<{ path: string; opts?: { limit: number } }>();
      return args.path;
    },
  });

  it('sends its JSON Schema and validates with its own messages', () => {
    expect(specOf(tool)).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        path: { type: 'string' },
        opts: { type: 'object', properties: { limit: { type: 'number', maximum: 100 } }, required: ['limit'] },
      },
      required: ['path'],
    });
    const registry = createToolRegistry([tool]);
    expect(prepareToolCall(registry, call('read', { path: 'x' }))).toEqual({
      ok: true,
      tool,
      arguments: { path: 'x' },
    });
    expect(prepareToolCall(registry, call('read', { path: 2, opts: { limit: 500 } }))).toEqual({
      ok: false,
      kind: 'invalidArguments',
      message:
        'Invalid arguments for tool "read": path: path must be a string (was a number); opts.limit: opts.limit must be at most 100 (was 500)',
    });
  });

  it('rejects a schema that does not describe an object', () => {
    const definition = { name: 'read', description: 'd', parameters: type('string'), execute };
    expect(invalidOptionsMessage(() => defineTool(definition as never))).toBe(
      'Tool "read": parameters must describe an object (JSON Schema type "object"), got a arktype schema whose JSON Schema type is "string".',
    );
  });
});

describe('any Standard Schema', () => {
  const registryOf = (parameters: ToolParameters) =>
    createToolRegistry([defineTool({ name: 't', description: 'd', parameters, execute })]);

  it('uses a toJsonSchema() method when there is no ~standard.jsonSchema', () => {
    const parameters = {
      '~standard': { version: 1, vendor: 'old', validate: (value: unknown) => ({ value }) },
      toJsonSchema: () => PATH_SCHEMA,
    };
    expect(
      specOf(defineTool({ name: 't', description: 'd', parameters: parameters as ToolParameters, execute })),
    ).toEqual(PATH_SCHEMA);
  });

  it('turns an asynchronous validation into an error result, and its rejection is never left unhandled', () => {
    const registry = registryOf(handSchema(() => Promise.reject(new Error('later'))));
    expect(prepareToolCall(registry, call('t', {}))).toEqual({
      ok: false,
      kind: 'invalidArguments',
      message: 'Invalid arguments for tool "t": the schema validates asynchronously, which tools do not support',
    });
  });

  it('turns a throwing validation and a non-object output into error results', () => {
    const throwing = registryOf(
      handSchema(() => {
        throw new Error('boom');
      }),
    );
    expect(prepareToolCall(throwing, call('t', {}))).toMatchObject({
      ok: false,
      message: 'Invalid arguments for tool "t": the validator threw: boom',
    });
    const scalar = registryOf(handSchema(() => ({ value: 42 })));
    expect(prepareToolCall(scalar, call('t', {}))).toMatchObject({
      ok: false,
      message: 'Invalid arguments for tool "t": the schema did not output an object',
    });
  });

  it('lists issues whose path segments are { key } objects, and a root issue as (root)', () => {
    const registry = registryOf(
      handSchema(() => ({ issues: [{ message: 'bad', path: [{ key: 'a' }, { key: 0 }] }, { message: 'whole' }] })),
    );
    expect(prepareToolCall(registry, call('t', {}))).toMatchObject({
      ok: false,
      message: 'Invalid arguments for tool "t": a[0]: bad; (root): whole',
    });
  });

  it('accepts a JSON Schema that states no type (arguments are always a JSON object)', () => {
    const parameters = handSchema(
      (value) => ({ value }),
      () => ({ properties: { q: { type: 'string' } } }),
    );
    expect(specOf(defineTool({ name: 't', description: 'd', parameters, execute }))).toEqual({
      properties: { q: { type: 'string' } },
    });
  });

  it('reports a JSON Schema converter that throws as InvalidOptions', () => {
    const parameters = handSchema(
      (value) => ({ value }),
      () => {
        throw new Error('unsupported target');
      },
    );
    expect(invalidOptionsMessage(() => defineTool({ name: 't', description: 'd', parameters, execute }))).toBe(
      'Tool "t": parameters cannot be expressed as JSON Schema (unsupported target). Use JSON-compatible schema types.',
    );
  });
});
