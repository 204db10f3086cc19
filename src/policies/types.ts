import type { ElicitationRequest } from '../tools/types.js';
import type { Counters } from '../domain/counters.js';
import type { AssistantMessage, Message, ToolCallBlock, ToolResultMessage } from '../domain/messages.js';

export type ContinueVerdict = { verdict: 'continue' };
export type StopVerdict = { verdict: 'stop'; reason: string };
export type InjectVerdict = { verdict: 'inject'; messages: Array<Message | string> };
export type SkipVerdict = { verdict: 'skip'; reason: string };
export type RewriteVerdict = { verdict: 'continue'; arguments: Record<string, unknown> };
export type ReplaceVerdict = { verdict: 'replace'; assistant: AssistantMessage };

export type Verdict = ContinueVerdict | StopVerdict | InjectVerdict;
export type PreDispatchVerdict = Verdict | SkipVerdict | RewriteVerdict;
export type PostTurnVerdict = Verdict | ReplaceVerdict;

export interface LoopPolicyContext {
  messages: readonly Message[];
  newMessages: readonly Message[];
  turnIndex: number;
  counters: Readonly<Counters>;
}

export interface PreDispatchContext {
  toolCall: { id: string; name: string; arguments: Record<string, unknown> };
  /** The whole batch of prepared calls, snapshotted once per batch. */
  batch: readonly ToolCallBlock[];
  messages: readonly Message[];
  turnIndex: number;
}

export interface PostTurnContext {
  /** The committed snapshot: history including this turn's assistant message and tool results. */
  messages: readonly Message[];
  assistant: AssistantMessage | null;
  toolResults: readonly ToolResultMessage[];
  turnIndex: number;
  counters: Readonly<Counters>;
}

type MaybePromise<T> = T | Promise<T>;
export type PreTurnPolicy = (ctx: LoopPolicyContext) => MaybePromise<Verdict>;
export type PreDispatchPolicy = (ctx: PreDispatchContext) => MaybePromise<PreDispatchVerdict>;
export type PostTurnPolicy = (ctx: PostTurnContext) => MaybePromise<PostTurnVerdict>;
export type PostLoopPolicy = (ctx: LoopPolicyContext) => MaybePromise<Verdict>;

export interface Policies {
  preTurn?: PreTurnPolicy[];
  preDispatch?: PreDispatchPolicy[];
  postTurn?: PostTurnPolicy[];
  postLoop?: PostLoopPolicy[];
}

export interface ApprovalRequest {
  toolCallId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  turnIndex: number;
  /**
   * Set when the running call asks a question rather than asking to run (an MCP elicitation):
   * `{ approved: true, arguments }` answers with `arguments`, `{ approved: false }` declines.
   */
  elicitation?: ElicitationRequest;
}
export type ApprovalDecision =
  { approved: true } | { approved: true; arguments: Record<string, unknown> } | { approved: false; reason?: string };
export type ApprovalHandler = (
  request: ApprovalRequest,
  ctx: { signal: AbortSignal },
) => MaybePromise<ApprovalDecision>;
export type ApprovalMode = 'always' | 'smart' | 'bypass';
