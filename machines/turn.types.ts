import type { ModelError } from '../src/domain/errors.js';
import type { TurnOutcome } from '../src/domain/outcomes.js';
import type { AssistantMessage, Message, ToolCallBlock, ToolResultMessage } from '../src/domain/messages.js';

/** How this turn attempt relates to the turn: a fresh turn, or the master re-running it after a failure. */
export type TurnAttempt = 'fresh' | 'retry' | 'overflowRetry' | 'resumed';

/** Where a turn interrupted by a crash continues: the reply it published and the results it had. */
export interface TurnResume {
  reply: ModelReply | null;
  results: ResultsByPosition;
  approvedCallIds: string[];
}

/** What this session has configured; the turn's guards read it (they stay pure). */
export interface TurnFeatures {
  preTurnPolicies: boolean;
  preDispatchPolicies: boolean;
  postTurnPolicies: boolean;
  /** Steering cancels unfinished tools after the grace period (else it waits for the batch). */
  steeringInterrupts: boolean;
  steeringGraceMs: number;
  /** The execution strategy is parallel / sequential / concurrency (not a custom partition). */
  fixedPartition: boolean;
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
}

/** What the model-call actor reports when the stream has ended. */
export interface ModelReply {
  /** False when the run was aborted before the model was called: there is no reply to publish. */
  called: boolean;
  /** Live streaming already published this attempt's messageStart: it can no longer be redone. */
  published: boolean;
  message: AssistantMessage;
  error: ModelError | null;
  /** Tool calls whose arguments were malformed or cut off (stop reason length). */
  invalidCalls: ReadonlyArray<{ id: string; reason: 'malformedJson' | 'truncated'; rawArguments: string }>;
}

/** A call that cleared preprocessing: a known tool with validated arguments. */
export interface PreparedCall {
  /** Position of the call among the assistant message's tool calls (results are committed in this order). */
  position: number;
  call: ToolCallBlock;
  approved: boolean;
  /** Cleared pre-dispatch with its current arguments (an approval rewrite clears this). */
  cleared: boolean;
}

/** Results decided so far, by position among the assistant's tool calls. */
export type ResultsByPosition = ReadonlyMap<number, ToolResultMessage>;

export interface PreprocessOutput {
  prepared: PreparedCall[];
  results: ResultsByPosition;
}

export interface PreDispatchOutput {
  prepared: PreparedCall[];
  results: ResultsByPosition;
  stopped: boolean;
  stopReason?: string;
  injected: Message[];
}

export interface ApprovalOutput {
  prepared: PreparedCall[];
  results: ResultsByPosition;
  /** Calls approved with new arguments: they go through pre-dispatch again. */
  rewritten: boolean;
}

export interface DispatchPlan {
  /** Groups of prepared-call indices; null when the partition was invalid. */
  groups: number[][] | null;
  invalidReason?: string;
}

export interface ResponseOutput {
  stopped: boolean;
  injected: Message[];
  assistant: AssistantMessage | null;
}

/** The turn machine's output: the domain's TurnOutcome (zod is the single source of the shape). */
export type TurnOutput = TurnOutcome;
