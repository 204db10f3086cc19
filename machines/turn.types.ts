import type { ModelError } from '../src/domain/errors.js';
import type { MessageDelta, TurnEndReason } from '../src/domain/events.js';
import type { TurnDecision, TurnOutcome } from '../src/domain/outcomes.js';
import type { AssistantMessage, Message, ToolCallBlock, ToolResultMessage } from '../src/domain/messages.js';

/**
 * How this turn attempt relates to the turn: a fresh turn, the master re-running it after a
 * failure, a run resumed after a restart, or the master closing a turn a deferred failure left open
 * (the run ends: the turn publishes an empty aborted message and its turnEnd).
 */
export type TurnAttempt = 'fresh' | 'retry' | 'overflowRetry' | 'resumed' | 'closing';

/** Results decided so far, by position among the assistant's tool calls. */
export type ResultsByPosition = ReadonlyMap<number, ToolResultMessage>;

/** Where a turn interrupted by a crash continues: what its checkpoint recorded. */
export interface TurnResume {
  /** The reply it published (null: the model is called again). */
  reply: ModelReply | null;
  /** Results whose toolExecutionEnd was published before the crash. */
  results: ResultsByPosition;
  /**
   * Results decided before the restart and not published yet (a denial, a skip), and the replay
   * rule's results for calls that were running ('never' tools: not re-run): published at commit.
   */
  notRerun: ResultsByPosition;
  /** Calls whose toolExecutionStart was published (a 'safe' re-run does not announce twice). */
  startedCallIds: string[];
  approvedCallIds: string[];
  /**
   * The arguments an approval gave calls in place of the model's (approveWith), by call id: a call
   * resumed after a restart runs with them, as it would have without the restart.
   */
  approvedArguments: Record<string, Record<string, unknown>>;
  /** Approval requests already published (never asked twice). */
  requestedCallIds: string[];
  /** The reply and its results are in history: only the turnEnd is missing. */
  committed: boolean;
}

/** How the batch runs: the execution strategy, as the turn's guards and pool read it. */
export type Execution =
  { kind: 'parallel' } | { kind: 'sequential' } | { kind: 'pool'; limit: number } | { kind: 'custom' };

/** What this session has configured; the turn's guards read it (they stay pure). */
export interface TurnFeatures {
  preTurnPolicies: boolean;
  preDispatchPolicies: boolean;
  postTurnPolicies: boolean;
  /** Steering cancels unfinished tools after the grace period (else it waits for the batch). */
  steeringInterrupts: boolean;
  steeringGraceMs: number;
  execution: Execution;
}

export interface TurnInput {
  turnIndex: number;
  features: TurnFeatures;
  /** The batch of new messages this turn starts with (prompt, steering, follow-ups, injections). */
  newMessages: Message[];
  attempt: TurnAttempt;
  /** Set for the first attempt after a restart (attempt 'resumed'). */
  resume: TurnResume | null;
  /** The master will re-run this turn if the model call fails with a retryable error. */
  retryAvailable: boolean;
  /** The master will re-run this turn on a fallback model if the model call fails for good. */
  fallbackAvailable: boolean;
  /** The master will re-run this turn once more if the context overflows. */
  overflowRecoveryAvailable: boolean;
  /** Steering was accepted during an earlier attempt of this turn (a re-run after a backoff): it takes effect now. */
  steeringArrived: boolean;
  /** After an overflow recovery: the compacted context every later attempt of this turn sends. */
  overflowView: Message[] | null;
  /** Which of the agent's models answers (0: the primary, then the fallbacks in order). */
  modelIndex: number;
}

/** What the model-call actor reports when the stream has ended. */
export interface ModelReply {
  /** False when the run was aborted before the model was called: there is no reply to publish. */
  called: boolean;
  /** Live streaming already published this attempt's messageStart: it can no longer be redone. */
  published: boolean;
  message: AssistantMessage;
  /** The attempt's deltas, published with the message once the turn knows the attempt is final (none when live). */
  deltas: MessageDelta[];
  error: ModelError | null;
  /** Tool calls whose arguments were malformed or cut off (stop reason length). */
  invalidCalls: ReadonlyArray<{ id: string; reason: 'malformedJson' | 'truncated'; rawArguments: string }>;
  /**
   * The reply's tool calls checked against the tool registry by the effect that read the stream
   * (absent for a failed reply, and for a reply restored after a restart: the turn prepares those).
   */
  prepared?: PreprocessOutput;
}

/** A call that cleared preprocessing: a known tool with validated arguments. */
export interface PreparedCall {
  /** Position of the call among the assistant message's tool calls (results are committed in this order). */
  position: number;
  call: ToolCallBlock;
  approved: boolean;
  /** Cleared pre-dispatch with its current arguments (an approval rewrite clears this). */
  cleared: boolean;
  /** An approval gave it new arguments (approveWith): a checkpoint keeps them for a resumed turn. */
  rewritten?: boolean;
  /** The tool's time limit (its own `timeoutMs`, else `timeouts.toolMs`); null: none. */
  timeoutMs: number | null;
}

/**
 * Results decided so far, newest first: a list that grows by one cell per result without copying
 * what came before, so a batch of 1,000 calls stays linear.
 */
export interface Settled {
  position: number;
  result: ToolResultMessage;
  /** Its toolExecutionEnd is out (a tool-call actor published it); the others are published at commit. */
  published: boolean;
  /** The call's tool was started (synthetic results and calls held before they started never count as work). */
  started: boolean;
  rest: Settled | null;
}

/** The pool: groups of indices into the prepared calls, run group after group, `limit` at a time. */
export interface Batch {
  groups: number[][];
  /** The group running, and the next index in it to start. */
  group: number;
  next: number;
  running: number;
  limit: number;
  /** The calls (prepared-call indices) that start in the step that made this batch: `startCalls` creates their actors. */
  starting: number[];
}

/** What the turn decided: one discriminated value, assigned where the decision is made; the output carries it. */
export type TurnEnding = TurnDecision;

/** A decision on one approval request, as the effects hand it to the turn (already checked). */
export type ApprovalVerdict =
  | { kind: 'approved' }
  /** `approveWith(arguments)`: valid for the tool's schema; the call goes through pre-dispatch again. */
  | { kind: 'approvedWith'; arguments: Record<string, unknown> }
  | { kind: 'denied'; reason: string }
  /** The handler threw, returned garbage, or approved arguments its schema refuses. */
  | { kind: 'failed'; message: string };

export interface PreprocessOutput {
  prepared: PreparedCall[];
  /** Unknown tools and invalid arguments: an error result each, by position. */
  invalid: Array<{ position: number; result: ToolResultMessage }>;
}

interface PreDispatchBatch {
  prepared: PreparedCall[];
  /** Calls a policy skipped: an error result each. */
  skipped: Array<{ position: number; result: ToolResultMessage }>;
  injected: Message[];
}

/** Pre-dispatch's decision on the batch: it goes on with the calls that cleared, or a policy stopped it (and why). */
export type PreDispatchOutput =
  (PreDispatchBatch & { kind: 'continue' }) | (PreDispatchBatch & { kind: 'stop'; reason: string });

/** Groups of prepared-call indices from a custom partition, or why it is invalid. */
export type PartitionOutput = { groups: number[][] } | { invalid: string };

export interface ResponseOutput {
  stopped: boolean;
  injected: Message[];
  assistant: AssistantMessage | null;
}

/** The turn machine's output: the domain's TurnOutcome (zod is the single source of the shape). */
export type TurnOutput = TurnOutcome;
