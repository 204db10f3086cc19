import type { ApprovalDecision } from '../policies/types.js';
import type { ToolSource } from '../tools/tool-source.js';
import type { AnyTool } from '../tools/types.js';

/** The reason sent with `notifications/cancelled` when the agent cancels a call (abort, steering). */
export const CANCEL_REASON = 'cancelled by the agent';

/** A server started as a child process, spoken to over stdio. */
export interface McpStdioServer {
  command: string;
  args?: string[];
  /** Added to a minimal inherited environment (PATH, HOME, …), as the MCP SDK does. */
  env?: Record<string, string>;
  cwd?: string;
  /** The server's stderr: 'inherit' (default), 'ignore', or 'pipe' (readable as `toolset.stderr`). */
  stderr?: 'inherit' | 'ignore' | 'pipe';
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServer {
  url: string | URL;
  headers?: Record<string, string>;
}

export type McpServerConfig = McpStdioServer | McpHttpServer;

/** Per-tool overrides, keyed by the tool's name on the server (without the prefix). */
export interface McpToolOverride {
  requiresApproval?: boolean;
  replay?: 'never' | 'safe';
}

/** An elicitation request from the server, in the vocabulary of approvals. */
export interface McpElicitationRequest {
  /** The toolset's prefix (the server). */
  server: string;
  message: string;
  /** The JSON Schema of the answer the server asks for (flat object of primitive fields). */
  requestedSchema: Record<string, unknown>;
  /** The agent's tool call the server asked during, when it is the only one in flight. */
  toolCallId?: string;
  toolName?: string;
}

/**
 * Answers a server's elicitation like an approval: `{ approved: true, arguments }` accepts with
 * `arguments` as the answer (`{ approved: true }` accepts with no fields), `{ approved: false }`
 * declines. A throw or an invalid decision declines.
 */
export type McpElicitationHandler = (
  request: McpElicitationRequest,
  ctx: { signal: AbortSignal },
) => ApprovalDecision | Promise<ApprovalDecision>;

export interface McpToolsOptions {
  /** The tools' prefix (`<name>__<tool>`); default: the server's reported name reduced to [A-Za-z0-9_-]. */
  name?: string;
  /** For every tool of this server; wins over the tools' annotations. */
  requiresApproval?: boolean;
  /** For every tool of this server: what a call in flight during a reconnect does. Default 'never'. */
  replay?: 'never' | 'safe';
  /** Per tool (by the server's tool name); wins over the server-wide options. */
  tools?: Record<string, McpToolOverride>;
  timeouts?: {
    /** Silence allowed between a call's start or last progress notification and its result. Default 60,000. */
    callMs?: number;
    /** Overall cap of a call, whatever its progress. Default 600,000. */
    totalMs?: number;
    /** Connecting and initializing. Default 30,000. */
    connectMs?: number;
  };
  /**
   * The largest tool result taken from this server, in bytes of its JSON. A larger one becomes an
   * error result naming its size (the server stays connected). Default 4 MiB. Over stdio a message
   * is read up to 10 MiB (the MCP SDK's limit; more when this is larger): a longer one breaks the
   * stream, so the call gets an error result naming that limit and the server is reconnected at once.
   */
  maxResultBytes?: number;
  /** Reconnection after a dead stdio process, a broken stdio stream or a lost HTTP session. */
  reconnect?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  /**
   * Answers the server's elicitation requests, instead of the agent's approval path (its approval
   * handler, or with a store `resolveApproval`) that answers them otherwise; with neither they are declined.
   */
  elicitation?: McpElicitationHandler;
}

/** The tools of one MCP server; `tools` follows the server's list (an agent re-reads it between turns). */
export interface McpToolset extends ToolSource {
  readonly tools: readonly AnyTool[];
  /** The prefix of the tools' names. */
  readonly name: string;
  /** Increases each time the list changes. */
  readonly version: number;
  /** The stdio server's stderr when `stderr: 'pipe'` was asked for (the current process's). */
  readonly stderr: NodeJS.ReadableStream | null;
  /** Disconnects (ending a stdio server); calls after it get an error result. */
  close(): Promise<void>;
}
