// agentchart/mcp: tools from Model Context Protocol servers. Kept out of the core so the MCP SDK stays optional.
export { mcpTools } from './mcp/toolset.js';
export { CANCEL_REASON } from './mcp/types.js';
export type {
  McpElicitationHandler,
  McpElicitationRequest,
  McpHttpServer,
  McpServerConfig,
  McpStdioServer,
  McpToolOverride,
  McpToolsOptions,
  McpToolset,
} from './mcp/types.js';
