import type * as ClientModule from '@modelcontextprotocol/sdk/client/index.js';
import type * as StdioModule from '@modelcontextprotocol/sdk/client/stdio.js';
import type * as HttpModule from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type * as TypesModule from '@modelcontextprotocol/sdk/types.js';
import { lazyPackage, type OptionalPackage } from '../peers/optional-sdk.js';

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
  AjvJsonSchemaValidator: JsonSchemaValidatorClass;
}

/**
 * The SDK's JSON Schema validator, by its shape: its own declaration imports Ajv's typings, which do
 * not compile with `skipLibCheck: false`, and our published types must.
 */
export interface JsonSchemaValidatorClass {
  new (): {
    getValidator(schema: Record<string, unknown>): (input: unknown) => { valid: boolean; errorMessage?: string };
  };
}

export type McpClient = ClientModule.Client;
export type McpTool = TypesModule.Tool;
export type McpCallResult = TypesModule.CallToolResult;
export type McpElicitParams = TypesModule.ElicitRequest['params'];
export type McpElicitResult = TypesModule.ElicitResult;

const MCP_SDK: OptionalPackage = { name: SDK_PACKAGE, range: '1.x', neededBy: 'agentchart/mcp' };

/** Imports the SDK once; a missing package is `AgentError('MissingDependency')` with the install command. */
export const loadSdk: () => Promise<McpSdk> = lazyPackage(MCP_SDK, importSdk);

async function importSdk(): Promise<McpSdk> {
  const [client, stdio, http, types, ajv] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('@modelcontextprotocol/sdk/validation/ajv'),
  ]);
  // Checked here, where the SDK's own typings are at hand: its class has the shape declared above.
  const validator: JsonSchemaValidatorClass = ajv.AjvJsonSchemaValidator;
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    StreamableHTTPError: http.StreamableHTTPError,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    ElicitRequestSchema: types.ElicitRequestSchema,
    AjvJsonSchemaValidator: validator,
  };
}
