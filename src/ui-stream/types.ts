import type { UIMessage, UIMessageChunk } from 'ai';
import type { EndReason, RunStatus } from '../domain/events.js';

/** The data parts an agentchart run adds to its assistant message (`data-<name>` parts). */
export interface AgentchartDataTypes {
  /** A running tool's latest `ctx.update(...)`: one part per call, replaced by each update. */
  'tool-progress': { toolCallId: string; toolName: string; partial: unknown };
  /** A steering receipt: the messages a turn took as steering (`turnIndex` is the turn that delivered them). */
  steering: { turnIndex: number; messages: string[] };
  // UIDataTypes is a Record<string, unknown>: an interface needs the index signature to extend it.
  [name: string]: unknown;
}

/**
 * Where the run stands when a response ends. `running` is sent at the start; a response that ends
 * before the run does says why: `awaitingApproval` (a durable approval waits for the user's answer)
 * or `continued` (the run goes on in the next assistant message, the response to a message the user
 * sent meanwhile). Otherwise the run's own end.
 */
export type AgentchartResponseStatus = 'running' | 'awaitingApproval' | 'continued' | RunStatus;

/** The assistant message's metadata (`message.metadata`): the run and how it ended. */
export interface AgentchartMessageMetadata {
  runId: string;
  status: AgentchartResponseStatus;
  /** With a run status: why the run ended. */
  endReason?: EndReason;
  /** A failed or aborted run's error, as in `RunResult.error` (`code`: `aborted`, `rateLimit`, `storeFailed`, …). */
  error?: { code: string; message: string };
}

/** `UIMessage` as agentchart streams it: `useChat<AgentchartUIMessage>()` types its metadata and data parts. */
export type AgentchartUIMessage = UIMessage<AgentchartMessageMetadata, AgentchartDataTypes>;

/** One chunk of the UI message stream as agentchart writes it. */
export type AgentchartUIChunk = UIMessageChunk<AgentchartMessageMetadata, AgentchartDataTypes>;
