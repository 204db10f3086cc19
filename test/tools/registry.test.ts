import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentError, defineTool, type AnyTool } from 'agentchart';
import { createToolRegistry } from 'agentchart/model-kit';

const execute = () => 'ok';
const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a file',
  parameters: z.object({
    path: z.string().describe('Path of the file'),
    encoding: z.enum(['utf8', 'base64']).default('utf8'),
    options: z
      .object({
        limit: z.number().int().min(1).max(100),
        tags: z.array(z.string()).optional(),
      })
      .optional(),
  }),
  execute,
});
const listDir = defineTool({ name: 'list_dir', description: 'Lists a directory', parameters: z.object({}), execute });

describe('createToolRegistry', () => {
  it('looks tools up by name and keeps registration order', () => {
    const registry = createToolRegistry([readFile, listDir]);
    expect(registry.get('read_file')).toBe(readFile);
    expect(registry.get('list_dir')).toBe(listDir);
    expect(registry.get('missing')).toBeUndefined();
    expect(registry.has('list_dir')).toBe(true);
    expect(registry.has('missing')).toBe(false);
    expect(registry.names).toEqual(['read_file', 'list_dir']);
    expect(registry.tools).toEqual([readFile, listDir]);
  });

  it('rejects duplicate names', () => {
    const again = defineTool({ name: 'read_file', description: 'other', parameters: z.object({}), execute });
    expect(() => createToolRegistry([readFile, listDir, again])).toThrow(
      new AgentError('InvalidOptions', 'Duplicate tool name "read_file": tool names must be unique.'),
    );
    try {
      createToolRegistry([readFile, again]);
    } catch (error) {
      expect((error as AgentError).code).toBe('InvalidOptions');
    }
  });

  it('validates tools not built with defineTool', () => {
    const handMade = { ...listDir, name: 'bad name' } as AnyTool;
    expect(() => createToolRegistry([handMade])).toThrow(AgentError);
    expect(() => createToolRegistry('nope' as unknown as AnyTool[])).toThrow(
      'tools must be an array of tools (from defineTool).',
    );
  });

  it('accepts no tools', () => {
    const registry = createToolRegistry([]);
    expect(registry.specs()).toEqual([]);
    expect(registry.names).toEqual([]);
  });

  it('builds provider specs with a plain JSON Schema (nested object, optional fields, enum, default)', () => {
    const specs = createToolRegistry([readFile, listDir]).specs();
    expect(specs).toEqual([
      {
        name: 'read_file',
        description: 'Reads a file',
        parameters: {
          type: 'object',
          properties: {
            path: { type: 'string', description: 'Path of the file' },
            encoding: { type: 'string', enum: ['utf8', 'base64'], default: 'utf8' },
            options: {
              type: 'object',
              properties: {
                limit: { type: 'integer', minimum: 1, maximum: 100 },
                tags: { type: 'array', items: { type: 'string' } },
              },
              required: ['limit'],
            },
          },
          // A field with a default is optional for the model: zod fills it in.
          required: ['path'],
        },
      },
      { name: 'list_dir', description: 'Lists a directory', parameters: { type: 'object', properties: {} } },
    ]);
    expect('$schema' in specs[0]!.parameters).toBe(false);
  });

  it('computes specs once and shares them, frozen', () => {
    const registry = createToolRegistry([readFile]);
    const first = registry.specs();
    expect(registry.specs()).toBe(first);
    expect(createToolRegistry([listDir, readFile]).specs()[1]!.parameters).toBe(first[0]!.parameters);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first[0])).toBe(true);
    const properties = first[0]!.parameters.properties as Record<string, Record<string, unknown>>;
    expect(Object.isFrozen(properties.options)).toBe(true);
    expect(() => {
      properties.path!.type = 'number';
    }).toThrow(TypeError);
  });
});
