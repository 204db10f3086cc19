// A small MCP server on the official SDK's McpServer, for the one behaviour the reference servers
// never show mid-session: a tool list that changes (tools/list_changed with a different list).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'switchboard', version: '1.0.0' });
const text = (value) => ({ content: [{ type: 'text', text: value }] });
const extra = server.registerTool(
  'extra',
  { description: 'A tool that appears later.', inputSchema: { word: z.string() } },
  ({ word }) => text(`extra ${word}`),
);
extra.disable();
const retired = server.registerTool('retired', { description: 'A tool that goes away.', inputSchema: {} }, () =>
  text('retired'),
);
server.registerTool(
  'switch',
  { description: 'Enables "extra" and removes "retired".', inputSchema: {}, annotations: { readOnlyHint: false } },
  () => {
    extra.enable();
    retired.remove();
    return text('switched');
  },
);
await server.connect(new StdioServerTransport());
