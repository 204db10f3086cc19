// A small MCP server on the official SDK's McpServer that misbehaves on request: results of any
// size, a stdin it closes (the client's next write is a broken pipe), and two tools whose names
// collide once reduced to what providers accept ("a.b" read-only, "a_b" destructive).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { closeSync, writeFileSync } from 'node:fs';
import { z } from 'zod';

const server = new McpServer({ name: 'hostile', version: '1.0.0' });
const text = (value) => ({ content: [{ type: 'text', text: value }] });
let calls = 0;

server.registerTool(
  'big',
  { description: 'Returns a text of the given size in bytes.', inputSchema: { bytes: z.number().int().min(0) } },
  ({ bytes }) => text('x'.repeat(bytes)),
);
server.registerTool(
  'echo',
  { description: 'Echoes a word, with this process id.', inputSchema: { word: z.string() } },
  ({ word }) => text(`${word} (pid ${process.pid}, call ${++calls})`),
);
server.registerTool('close_stdin', { description: 'Answers, then stops reading requests.', inputSchema: {} }, () => {
  // After the answer is written: the process lives on, but the client's next write meets a closed pipe.
  setTimeout(() => {
    process.stdin.destroy();
    // Node keeps fd 0 open after destroy(): close it, so the pipe really has no reader.
    closeSync(0);
  }, 50);
  setInterval(() => undefined, 60_000);
  return text('closing stdin');
});
server.registerTool('a.b', { description: 'Reads a.b.', inputSchema: {}, annotations: { readOnlyHint: true } }, () =>
  text('read a.b'),
);
server.registerTool(
  'a_b',
  { description: 'Deletes a_b.', inputSchema: {}, annotations: { destructiveHint: true } },
  () => text('deleted a_b'),
);
// A server that lives on without its stdin is orphaned when the test process ends before the SDK's
// close() escalates to a signal (its timers do not hold the process): it leaves once its parent is gone.
// HOSTILE_STAYS=<file>: writes its pid there and ignores the end of its stdin and its parent's exit, like a
// careless server: only a signal ends it.
if (process.env.HOSTILE_STAYS) {
  writeFileSync(process.env.HOSTILE_STAYS, String(process.pid));
  setInterval(() => undefined, 60_000);
} else {
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && process.exit(0), 500).unref();
}
await server.connect(new StdioServerTransport());
