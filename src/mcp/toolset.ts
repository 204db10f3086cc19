import { AgentError } from '../domain/errors.js';
import { assertValidTool } from '../tools/define.js';
import { jsonSchemaParameters, type JsonSchemaCheck, type StandardIssue } from '../tools/json-schema-parameters.js';
import { TOOL_SOURCE } from '../tools/tool-source.js';
import type { AnyTool, ToolContext, ToolOutput } from '../tools/types.js';
import { callMcpTool, messageOf, type CallPlan } from './call.js';
import { isStdio, McpConnection, type Link } from './connection.js';
import { routeElicitation, type ElicitingCall } from './elicitation.js';
import { agentToolNames, approvalFromAnnotations, prefixFromServerName } from './naming.js';
import { resolveSettings, type McpSettings } from './settings.js';
import { loadSdk, type McpSdk, type McpTool } from './sdk.js';
import type { McpServerConfig, McpToolset, McpToolsOptions } from './types.js';

/**
 * Connects to an MCP server and yields its tools as agentchart tools named `<prefix>__<tool>`.
 * Use as `createAgent({ tools: [...set.tools] })`: the agent follows later list changes between
 * turns (each tool carries its toolset). Rejects with `AgentError('MissingDependency')` without
 * the SDK, `InvalidOptions` for bad options and `McpUnavailable` when the server cannot be reached.
 */
export async function mcpTools(server: McpServerConfig, options: McpToolsOptions = {}): Promise<McpToolset> {
  const settings = resolveSettings(server, options);
  const sdk = await loadSdk();
  const toolset = new LiveToolset(sdk, server, options, settings);
  await toolset.start();
  return toolset;
}

interface BuiltTool {
  /** What the tool was built from: the same definition keeps the same tool object. */
  key: string;
  tool: AnyTool;
}

class LiveToolset implements McpToolset {
  tools: readonly AnyTool[] = Object.freeze([]);
  version = 0;
  name = '';
  private readonly connection: McpConnection;
  private readonly built = new Map<string, BuiltTool>();
  /** Calls running now, for attributing an elicitation request to its call. */
  private readonly running = new Map<string, ElicitingCall>();
  private refreshing: Promise<void> | null = null;
  private refreshAgain = false;
  private readonly validator: InstanceType<McpSdk['AjvJsonSchemaValidator']>;

  constructor(
    private readonly sdk: McpSdk,
    private readonly server: McpServerConfig,
    private readonly options: McpToolsOptions,
    private readonly settings: McpSettings,
  ) {
    this.validator = new sdk.AjvJsonSchemaValidator();
    this.connection = new McpConnection(sdk, server, settings, {
      onToolListChanged: () => this.requestRefresh(),
      // The server may have come back with other tools.
      onReconnected: () => this.requestRefresh(),
      elicit: (params, signal) => {
        // The protocol does not say which call a request belongs to: only a lone call in flight is named.
        const call = this.running.size === 1 ? [...this.running.values()][0] : undefined;
        return routeElicitation(this.options.elicitation, params, { server: this.name, call, signal });
      },
    });
  }

  get stderr(): NodeJS.ReadableStream | null {
    return this.connection.current?.stderr ?? null;
  }

  async start(): Promise<void> {
    try {
      const link = await this.connection.open();
      this.name = this.options.name ?? prefixFromServerName(link.client.getServerVersion()?.name);
      await this.refresh(link);
    } catch (error) {
      await this.connection.close();
      if (error instanceof AgentError) throw error;
      throw new AgentError(
        'McpUnavailable',
        `mcpTools: could not connect to the MCP server ${describe(this.server)}: ${messageOf(error)}`,
      );
    }
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  /** Refreshes once, and once more if asked again meanwhile; a failure keeps the current list. */
  private requestRefresh(): void {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        try {
          await this.refresh(await this.connection.link());
        } catch {
          // The list stays as it was; the next notification or reconnection tries again.
        }
      } while (this.refreshAgain);
      this.refreshing = null;
    })();
  }

  private async refresh(link: Link): Promise<void> {
    const listed: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await link.client.listTools(cursor ? { cursor } : undefined, { timeout: this.settings.connectMs });
      listed.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    // Names that collide are told apart here, for the whole list at once (or the list is refused).
    const names = agentToolNames(
      this.name,
      listed.map((remote) => remote.name),
    );
    const next: AnyTool[] = [];
    const built = new Map<string, BuiltTool>();
    for (const remote of listed) {
      const name = names.get(remote.name) as string;
      const key = JSON.stringify([name, remote.description, remote.inputSchema, remote.annotations]);
      const previous = this.built.get(remote.name);
      const tool = previous?.key === key ? previous.tool : this.buildTool(remote, name);
      // A malformed definition leaves the tool out.
      if (!tool) continue;
      built.set(remote.name, { key, tool });
      next.push(tool);
    }
    this.built.clear();
    for (const [name, entry] of built) this.built.set(name, entry);
    const changed = next.length !== this.tools.length || next.some((tool, index) => tool !== this.tools[index]);
    if (changed) {
      this.tools = Object.freeze(next);
      this.version++;
    }
  }

  private buildTool(remote: McpTool, name: string): AnyTool | null {
    const override = this.options.tools?.[remote.name] ?? {};
    const replay = override.replay ?? this.options.replay ?? 'never';
    const plan: CallPlan = {
      remoteName: remote.name,
      toolName: name,
      server: this.name,
      replay,
      ...this.settings.call,
    };
    const tool = {
      name,
      description: remote.description ?? '',
      parameters: jsonSchemaParameters(remote.inputSchema, this.checkerFor(remote.inputSchema)),
      requiresApproval:
        override.requiresApproval ?? this.options.requiresApproval ?? approvalFromAnnotations(remote.annotations),
      progress: false,
      replay,
      execute: (args: Record<string, unknown>, ctx: ToolContext) => this.call(plan, args, ctx),
      [TOOL_SOURCE]: this,
    };
    try {
      assertValidTool(tool);
    } catch {
      return null;
    }
    return Object.freeze(tool);
  }

  private async call(plan: CallPlan, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> {
    this.running.set(ctx.toolCallId, {
      toolCallId: ctx.toolCallId,
      toolName: plan.toolName,
      ctx,
    });
    try {
      const output = await callMcpTool(this.sdk, this.connection, plan, args, ctx);
      // A list change the call caused (notified before its response) is in place for the next turn.
      if (this.refreshing && !ctx.signal.aborted) await this.refreshing;
      return output;
    } finally {
      this.running.delete(ctx.toolCallId);
    }
  }

  /** The server's schema as a validator; a schema the validator cannot compile is left to the server. */
  private checkerFor(schema: Record<string, unknown>): JsonSchemaCheck | undefined {
    let validate: (value: unknown) => { valid: boolean; errorMessage?: string };
    try {
      validate = this.validator.getValidator(schema);
    } catch {
      return undefined;
    }
    return (args) => {
      const result = validate(args);
      return result.valid ? [] : issuesOf(result.errorMessage ?? 'invalid arguments');
    };
  }
}

/** Ajv's error text ("data/limit must be integer, data must have required property 'path'") as issues. */
function issuesOf(errorText: string): StandardIssue[] {
  return errorText.split(', ').map((part) => {
    const match = /^data(\S*) (.*)$/.exec(part);
    if (!match) return { message: part };
    return { message: match[2] as string, path: (match[1] as string).split('/').filter((key) => key !== '') };
  });
}

function describe(server: McpServerConfig): string {
  return isStdio(server) ? `"${server.command}"` : `at ${String(server.url)}`;
}
