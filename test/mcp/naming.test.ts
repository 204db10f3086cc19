import { describe, expect, it } from 'vitest';
import { AgentError } from 'agentchart';
import { mcpTools } from 'agentchart/mcp';
import { agentToolName, agentToolNames } from '../../src/mcp/naming.js';

describe('MCP tool names: <prefix>__<tool>, colliding names told apart', () => {
  it('keeps the plain name of a tool no other reduces to', () => {
    expect([...agentToolNames('srv', ['read', 'a.b', 'write file']).entries()]).toEqual([
      ['read', 'srv__read'],
      ['a.b', 'srv__a_b'],
      ['write file', 'srv__write_file'],
    ]);
  });

  it('renames every tool of a colliding group by a hash of its own name, whatever the list order', () => {
    const names = agentToolNames('srv', ['a.b', 'x', 'a_b', 'a b']);
    const renamed = ['a.b', 'a_b', 'a b'].map((remote) => names.get(remote));
    expect(new Set(renamed).size).toBe(3);
    for (const name of renamed) expect(name).toMatch(/^srv__a_b_[0-9a-z]+$/);
    expect(names.get('x')).toBe('srv__x');
    const reordered = agentToolNames('srv', ['a b', 'a_b', 'x', 'a.b']);
    for (const remote of ['a.b', 'a_b', 'a b', 'x']) expect(reordered.get(remote)).toBe(names.get(remote));
    // Long names keep their hashed form, and stay within 64 characters.
    const long = 'x'.repeat(80);
    expect(agentToolNames('srv', [long]).get(long)).toBe(agentToolName('srv', long));
    expect(agentToolName('srv', long).length).toBeLessThanOrEqual(64);
  });

  it('refuses a list that names one tool twice: McpToolConflict naming both', () => {
    let thrown: unknown;
    try {
      agentToolNames('srv', ['dup', 'other', 'dup']);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AgentError);
    expect(thrown).toMatchObject({ code: 'McpToolConflict' });
    expect((thrown as Error).message).toMatch(
      /^MCP server "srv": the tools "dup" and "dup" would both be named "srv__dup_[0-9a-z]+"\.$/,
    );
  });
});

describe('mcpTools options: maxResultBytes', () => {
  it('must be an integer from 1 to 256 MiB', async () => {
    for (const maxResultBytes of [0, -1, 1.5, 2 ** 40, Number.NaN])
      await expect(mcpTools({ command: 'unused' }, { maxResultBytes })).rejects.toMatchObject({
        code: 'InvalidOptions',
        message: 'mcpTools: maxResultBytes must be an integer from 1 to 268435456 (bytes).',
      });
  });
});
