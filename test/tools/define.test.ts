import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type AnyTool } from 'agentchart';
import { agentErrorMessage } from '../support/errors.js';

const params = z.object({ path: z.string() });
const execute = () => 'ok';

const invalidOptionsMessage = (run: () => unknown) => agentErrorMessage('InvalidOptions', run);

describe('defineTool', () => {
  it('fills in defaults and keeps the definition', () => {
    const tool = defineTool({ name: 'read_file', description: 'Reads a file', parameters: params, execute });
    expect(tool.name).toBe('read_file');
    expect(tool.description).toBe('Reads a file');
    expect(tool.parameters).toBe(params);
    expect(tool.requiresApproval).toBe(false);
    expect(tool.progress).toBe(false);
    expect(tool.replay).toBe('never');
    expect(tool.execution).toBeUndefined();
    expect('execution' in tool).toBe(false);
    expect(tool.execute).toBe(execute);
    expect(Object.isFrozen(tool)).toBe(true);
  });

  it('keeps explicit flags', () => {
    const tool = defineTool({
      name: 'deploy',
      description: '',
      parameters: z.object({}),
      requiresApproval: true,
      progress: true,
      replay: 'safe',
      execution: 'sequential',
      execute,
    });
    expect([tool.requiresApproval, tool.progress, tool.replay, tool.execution]).toEqual([
      true,
      true,
      'safe',
      'sequential',
    ]);
  });

  it('types execute args as the parsed output of the parameters', () => {
    const tool = defineTool({
      name: 'typed',
      description: 'd',
      parameters: z.object({ n: z.coerce.number(), tag: z.string().optional(), mode: z.enum(['a', 'b']).default('a') }),
      execute(args) {
        expectTypeOf(args).toEqualTypeOf<{ n: number; tag?: string | undefined; mode: 'a' | 'b' }>();
        return String(args.n);
      },
    });
    expectTypeOf(tool).toExtend<AnyTool>();
  });

  it.each([
    ['', '""'],
    ['read file', '"read file"'],
    ['read.file', '"read.file"'],
    ['x'.repeat(65), JSON.stringify('x'.repeat(65))],
    ['résumé', '"résumé"'],
  ])('rejects the name %j', (name, shown) => {
    expect(invalidOptionsMessage(() => defineTool({ name, description: 'd', parameters: params, execute }))).toBe(
      `Invalid tool name ${shown}: a tool name must be 1 to 64 characters of letters, digits, "_" or "-" (/^[a-zA-Z0-9_-]{1,64}$/).`,
    );
  });

  it('accepts a 64-character name with digits, "_" and "-"', () => {
    const name = `a-b_C9${'z'.repeat(58)}`;
    expect(name).toHaveLength(64);
    expect(defineTool({ name, description: 'd', parameters: params, execute }).name).toBe(name);
  });

  it('rejects a non-string name', () => {
    const definition = { name: 42, description: 'd', parameters: params, execute } as unknown as Parameters<
      typeof defineTool
    >[0];
    expect(invalidOptionsMessage(() => defineTool(definition))).toBe(
      'Invalid tool name number 42: a tool name must be 1 to 64 characters of letters, digits, "_" or "-" (/^[a-zA-Z0-9_-]{1,64}$/).',
    );
  });

  it.each([
    [z.string(), 'a zod string schema'],
    [z.object({ a: z.string() }).transform((v) => v), 'a zod pipe schema'],
    [{ type: 'object', properties: {} }, 'an object'],
    [{ '~standard': { version: 2, vendor: 'future', validate: () => ({ value: {} }) } }, 'an object'],
    [undefined, 'undefined'],
  ])('rejects parameters that are not a schema agentchart can use (%#)', (parameters, shown) => {
    const definition = { name: 't', description: 'd', parameters, execute } as unknown as Parameters<
      typeof defineTool
    >[0];
    expect(invalidOptionsMessage(() => defineTool(definition))).toBe(
      'Tool "t": parameters must be a zod object schema (z.object({...})) or a Standard Schema of an object with a ' +
        'JSON Schema (~standard.jsonSchema: valibot via toStandardJsonSchema from @valibot/to-json-schema, arktype, jsonSchemaParameters(schema), …), ' +
        `got ${shown}.`,
    );
  });

  it('rejects parameters with no JSON Schema form', () => {
    expect(
      invalidOptionsMessage(() =>
        defineTool({ name: 't', description: 'd', parameters: z.object({ when: z.date() }), execute }),
      ),
    ).toBe(
      'Tool "t": parameters cannot be expressed as JSON Schema (Date cannot be represented in JSON Schema). ' +
        'Use JSON-compatible schema types.',
    );
  });

  it.each([
    ['description', { description: 5 }, 'description must be a string, got number 5'],
    ['execute', { execute: 'run' }, 'execute must be a function, got the string "run"'],
    ['requiresApproval', { requiresApproval: 'yes' }, 'requiresApproval must be a boolean, got the string "yes"'],
    ['progress', { progress: 1 }, 'progress must be a boolean, got number 1'],
    ['replay', { replay: 'always' }, `replay must be 'never' or 'safe', got the string "always"`],
    ['execution', { execution: 'serial' }, `execution must be 'parallel' or 'sequential', got the string "serial"`],
  ])('rejects an invalid %s', (_field, override, detail) => {
    const definition = {
      name: 't',
      description: 'd',
      parameters: params,
      execute,
      ...override,
    } as unknown as Parameters<typeof defineTool>[0];
    expect(invalidOptionsMessage(() => defineTool(definition))).toBe(`Tool "t": ${detail}.`);
  });

  it('rejects a missing definition', () => {
    expect(invalidOptionsMessage(() => defineTool(null as unknown as Parameters<typeof defineTool>[0]))).toBe(
      'defineTool: expected a tool definition object.',
    );
  });
});
