import type * as ClientModule from '@modelcontextprotocol/sdk/client/index.js';
import type * as StdioModule from '@modelcontextprotocol/sdk/client/stdio.js';
import type * as HttpModule from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type * as TypesModule from '@modelcontextprotocol/sdk/types.js';
import type * as AjvModule from '@modelcontextprotocol/sdk/validation/ajv';
import { AgentError } from '../domain/errors.js';

export const SDK_PACKAGE = '@modelcontextprotocol/sdk';

/** The parts of the official MCP SDK (1.x) agentchart uses, loaded on demand: it is an optional peer. */
export interface McpSdk {
  Client: typeof ClientModule.Client;
  StdioClientTransport: typeof StdioModule.StdioClientTransport;
  StreamableHTTPClientTransport: typeof HttpModule.StreamableHTTPClientTransport;
  StreamableHTTPError: typeof HttpModule.StreamableHTTPError;
  McpError: typeof TypesModule.McpError;
  ErrorCode: typeof TypesModule.ErrorCode;
  ToolListChangedNotificationSchema: typeof TypesModule.ToolListChangedNotificationSchema;
  ElicitRequestSchema: typeof TypesModule.ElicitRequestSchema;
  AjvJsonSchemaValidator: typeof AjvModule.AjvJsonSchemaValidator;
}

export type McpClient = ClientModule.Client;
export type McpTool = TypesModule.Tool;
export type McpCallResult = TypesModule.CallToolResult;
export type McpElicitParams = TypesModule.ElicitRequest['params'];
export type McpElicitResult = TypesModule.ElicitResult;

let loaded: Promise<McpSdk> | null = null;

/** Imports the SDK once; a missing package is `AgentError('MissingDependency')` with the install command. */
export function loadSdk(): Promise<McpSdk> {
  loaded ??= importSdk().catch((error: unknown) => {
    loaded = null;
    throw error;
  });
  return loaded;
}

async function importSdk(): Promise<McpSdk> {
  try {
    const [client, stdio, http, types, ajv] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/types.js'),
      import('@modelcontextprotocol/sdk/validation/ajv'),
    ]);
    return {
      Client: client.Client,
      StdioClientTransport: stdio.StdioClientTransport,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
      StreamableHTTPError: http.StreamableHTTPError,
      McpError: types.McpError,
      ErrorCode: types.ErrorCode,
      ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
      ElicitRequestSchema: types.ElicitRequestSchema,
      AjvJsonSchemaValidator: ajv.AjvJsonSchemaValidator,
    };
  } catch (error) {
    if (isModuleNotFound(error)) {
      throw new AgentError(
        'MissingDependency',
        `agentchart/mcp needs the optional peer dependency ${SDK_PACKAGE} (1.x): npm install ${SDK_PACKAGE}`,
      );
    }
    throw error;
  }
}

/** Node's not-found codes, also on a wrapped error's cause (loaders and test runners wrap import errors). */
function isModuleNotFound(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || isModuleNotFound(cause, depth + 1);
}
