// A CLI that connects a stdio server, closes the toolset and exits (process.exit: no handle keeps it running).
import { mcpTools } from 'agentchart/mcp';

const { server, pidFile } = JSON.parse(process.env.CLOSE_AND_LEAVE ?? '{}') as { server: string; pidFile: string };
const toolset = await mcpTools(
  { command: process.execPath, args: [server], env: { HOSTILE_STAYS: pidFile }, stderr: 'ignore' },
  { name: 'careless' },
);
console.log(JSON.stringify({ tools: toolset.tools.length }));
await toolset.close();
process.exit(0);
