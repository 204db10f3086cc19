import { describe, expect, it, vi } from 'vitest';
import { AgentError } from 'agentchart';
import { mcpTools } from 'agentchart/mcp';

// As when the optional peer is not installed: importing the SDK fails with Node's module-not-found code.
vi.mock('@modelcontextprotocol/sdk/client/index.js', () => {
  throw Object.assign(new Error("Cannot find package '@modelcontextprotocol/sdk'"), { code: 'ERR_MODULE_NOT_FOUND' });
});

describe('agentchart/mcp without its optional peer', () => {
  it('rejects with AgentError MissingDependency naming the package and the install command', async () => {
    const attempt = mcpTools({ command: 'unused' });
    await expect(attempt).rejects.toBeInstanceOf(AgentError);
    await expect(attempt).rejects.toMatchObject({
      code: 'MissingDependency',
      message:
        'agentchart/mcp needs the optional peer dependency "@modelcontextprotocol/sdk" (1.x), which is not installed. ' +
        'Install it with: npm install @modelcontextprotocol/sdk',
    });
  });

  it('checks its options before loading anything: a bad option is InvalidOptions', async () => {
    await expect(mcpTools({ command: 'x' }, { name: 'has spaces' })).rejects.toMatchObject({ code: 'InvalidOptions' });
    await expect(mcpTools({ command: 'x', url: 'http://127.0.0.1:1/mcp' } as never)).rejects.toMatchObject({
      code: 'InvalidOptions',
    });
    await expect(mcpTools({ url: 'not a url' })).rejects.toMatchObject({
      code: 'InvalidOptions',
      message: 'mcpTools: server.url must be an absolute URL.',
    });
    await expect(mcpTools({ command: 'x' }, { timeouts: { callMs: 0 } })).rejects.toMatchObject({
      code: 'InvalidOptions',
    });
    await expect(mcpTools({ command: 'x' }, { tools: { echo: { replay: 'always' as never } } })).rejects.toMatchObject({
      code: 'InvalidOptions',
      message: `mcpTools: tools.echo.replay must be 'never' or 'safe'.`,
    });
  });
});
