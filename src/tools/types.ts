import type { StandardJsonSchemaParameters } from './json-schema-parameters.js';
import type { ToolArguments, ToolParameters } from './schema.js';

/** What `execute` gets besides its arguments. */
export interface ToolContext {
  /** The provider's id of this call. */
  toolCallId: string;
  /** Aborted when the run is aborted, the batch is cancelled, or steering interrupts the call. */
  signal: AbortSignal;
  /** Reports progress. Awaited: a slow consumer slows the tool; an update is never dropped. */
  update(partial: unknown): Promise<void>;
  /** Stable per tool call across restarts; pass it to external systems to make side effects idempotent. */
  idempotencyKey: string;
  /**
   * Asks the host a question while the call runs (an MCP server's elicitation), through the agent's
   * approval path; never rejects. Absent when a tool is run outside an agent.
   */
  elicit?(request: ElicitationRequest): Promise<ElicitationAnswer>;
}

/** A question a running tool asks the host: a message and the JSON Schema of the answer. */
export interface ElicitationRequest {
  /** The question, for a person. */
  message: string;
  /** The JSON Schema of the answer's fields. */
  requestedSchema: Record<string, unknown>;
  /** Who asks (an MCP toolset's prefix), for the host's prompt. */
  server?: string;
}

/** `accept` with the answer's fields; `decline` (denied, or nobody to ask) and `cancel` (the call ended) say why. */
export type ElicitationAnswer =
  { action: 'accept'; content: Record<string, unknown> } | { action: 'decline' | 'cancel'; reason: string };

/** What `execute` returns: the result text, or `{ content, isError }` for an error result the model reads. */
export type ToolOutput = string | { content: string; isError?: boolean };

/** How a tool may run relative to others in a batch (a hint for `partition` strategies). */
export type ToolExecutionHint = 'parallel' | 'sequential';

/** A tool the model may call: made by `defineTool`, which checks it. */
export interface Tool<Params extends ToolParameters = ToolParameters> {
  /** The name the model calls it by: 1–64 letters, digits, `_` or `-`. */
  readonly name: string;
  /** What it does, for the model. */
  readonly description: string;
  /** The arguments' schema: the model sees its JSON Schema, `execute` gets its validated output. */
  readonly parameters: Params;
  /** Ask for approval before running (in 'smart' approval mode). */
  readonly requiresApproval: boolean;
  /** A progress-report tool: its calls never make a report-mode turn a success. */
  readonly progress: boolean;
  /** What to do after a crash while this tool was running: 'never' re-run (default) or 'safe' to re-run. */
  readonly replay: 'never' | 'safe';
  /** A hint for your own `partition` function; the built-in strategies do not read it. */
  readonly execution?: ToolExecutionHint;
  /** Aborts a call still running after this many ms (result `timed out after N ms`); overrides `timeouts.toolMs`. */
  readonly timeoutMs?: number;
  /**
   * Runs the call. A throw becomes an error result; the call's `signal` aborts on abort, steering or its time limit.
   */
  execute(args: ToolArguments<Params>, ctx: ToolContext): ToolOutput | Promise<ToolOutput>;
}

/** A tool whose parameters are a JSON Schema rather than zod (e.g. an MCP server's tool). */
export interface JsonSchemaTool extends Omit<Tool, 'parameters' | 'execute'> {
  /** The arguments' JSON Schema, checked with a small validator. */
  readonly parameters: StandardJsonSchemaParameters;
  /** Runs the call with the checked arguments. */
  execute(args: Record<string, unknown>, ctx: ToolContext): ToolOutput | Promise<ToolOutput>;
}

/** A tool with its argument type erased, as registries and machines hold it (JsonSchemaTool is one). */
export type AnyTool = Tool<ToolParameters>;
