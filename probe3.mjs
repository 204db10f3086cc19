import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
const t = new StdioClientTransport({ command: process.execPath, args: ['test/mcp/support/hostile-server.mjs'], stderr: 'inherit', maxBufferSize: 64*1024*1024 });
const c = new Client({ name: 'x', version: '1' });
await c.connect(t);
for (const mb of [1, 4, 11]) {
  const t0 = performance.now();
  const r = await c.callTool({ name: 'big', arguments: { bytes: mb * 1e6 } });
  console.log(mb, 'MB', Math.round(performance.now() - t0), 'ms', r.content[0].text.length);
}
process.exit(0);
