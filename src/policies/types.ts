import type { ElicitationRequest } from '../tools/types.js';
import type { Counters } from '../domain/counters.js';
import type { AssistantMessage, Message, ToolCallBlock, ToolResultMessage } from '../domain/messages.js';

export type ContinueVerdict = { verdict: 'continue' };
export type StopVerdict = { verdict: 'stop'; reason: string };
export type InjectVerdict = { verdict: 'inject'; messages: Array<Message | string> };
export type SkipVerdict = { verdict: 'skip'; reason: string };
export type RewriteVerdict = { verdict: 'continue'; arguments: Record<string, unknown> };
export type ReplaceVerdict = { verdict: 'replace'; assistant: AssistantMessage };

/** What a pre-turn or post-loop policy answers: go on, stop the run (`policyStop`), or add messages. */
export type Verdict = ContinueVerdict | StopVerdict | InjectVerdict;
/**
 * What a pre-dispatch policy answers about one tool call: also skip it (an error result), or run it with other
 * arguments.
 */
export type PreDispatchVerdict = Verdict | SkipVerdict | RewriteVerdict;
/** What a post-turn policy answers: also replace the committed assistant message (with the same tool-call blocks). */
export type PostTurnVerdict = Verdict | ReplaceVerdict;

/** What a pre-turn or post-loop policy sees. */
export interface LoopPolicyContext {
  /** The history so far. */
  messages: readonly Message[];
  /** The messages this turn starts with (prompt, steering, follow-ups, injected); empty for post-loop. */
  newMessages: readonly Message[];
  /** The turn's index (counting across the agent's runs). */
  turnIndex: number;
  /** The run's counters so far. */
  counters: Readonly<Counters>;
}

/** What a pre-dispatch policy sees: one tool call of the batch, before its approval and its start. */
export interface PreDispatchContext {
  /** The call, with the arguments the schema validated (a copy: change them with a rewrite verdict). */
  toolCall: { id: string; name: string; arguments: Record<string, unknown> };
  /** The whole batch of prepared calls, snapshotted once per batch. */
  batch: readonly ToolCallBlock[];
  /** The history so far. */
  messages: readonly Message[];
  /** The turn's index. */
  turnIndex: number;
}

/** What a post-turn policy sees: the turn as it was committed. */
export interface PostTurnContext {
  /** The committed snapshot: history including this turn's assistant message and tool results. */
  messages: readonly Message[];
  /** The turn's assistant message (null when the turn ended before the model answered). */
  assistant: AssistantMessage | null;
  /** The turn's tool results, in call order. */
  toolResults: readonly ToolResultMessage[];
  /** The turn's index. */
  turnIndex: number;
  /** The run's counters so far. */
  counters: Readonly<Counters>;
}

type MaybePromise<T> = T | Promise<T>;
/** Consulted before each turn's model call. */
export type PreTurnPolicy = (ctx: LoopPolicyContext) => MaybePromise<Verdict>;
/** Consulted for each tool call of a batch, before any approval is asked. */
export type PreDispatchPolicy = (ctx: PreDispatchContext) => MaybePromise<PreDispatchVerdict>;
/** Consulted after each turn is committed. */
export type PostTurnPolicy = (ctx: PostTurnContext) => MaybePromise<PostTurnVerdict>;
/** Consulted when the model has nothing left to do: an inject opens another turn. */
export type PostLoopPolicy = (ctx: LoopPolicyContext) => MaybePromise<Verdict>;

/** The four policy slots; each is an array run in order (a stop or a skip ends its slot). */
export interface Policies {
  /** Before each turn's model call. */
  preTurn?: PreTurnPolicy[];
  /** For each tool call, before its approval and its start. */
  preDispatch?: PreDispatchPolicy[];
  /** After each turn is committed. */
  postTurn?: PostTurnPolicy[];
  /** When the model has nothing left to do. */
  postLoop?: PostLoopPolicy[];
}

/** What the approval handler is asked: one tool call (or a running call's question, `elicitation`). */
export interface ApprovalRequest {
  /** The call's id. */
  toolCallId: string;
  /** The tool's name. */
  toolName: string;
  /** The validated arguments the call would run with. */
  arguments: Record<string, unknown>;
  /** The turn's index. */
  turnIndex: number;
  /**
   * Set when the running call asks a question rather than asking to run (an MCP elicitation):
   * `{ approved: true, arguments }` answers with `arguments`, `{ approved: false }` declines.
   */
  elicitation?: ElicitationRequest;
}
/**
 * An approval's answer: approve, approve with other arguments (validated, then through the pre-dispatch policies
 * again), or deny with a reason the model reads.
 */
export type ApprovalDecision =
  { approved: true } | { approved: true; arguments: Record<string, unknown> } | { approved: false; reason?: string };
/**
 * Answers approval requests (`createAgent({ approval })`); `signal` aborts when the run is aborted or steering
 * withdraws the request. A throw or an answer of another shape is a denial.
 */
export type ApprovalHandler = (
  request: ApprovalRequest,
  ctx: { signal: AbortSignal },
) => MaybePromise<ApprovalDecision>;
/** Which calls ask for approval: 'smart' (tools marked `requiresApproval`), 'always', 'bypass'. */
export type ApprovalMode = 'always' | 'smart' | 'bypass';
