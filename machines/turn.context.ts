import type { ModelError } from '../src/domain/errors.js';
import type { AssistantMessage, Message } from '../src/domain/messages.js';
import { toolCallsOf } from '../src/domain/messages.js';
import { resultsInCallOrder } from './tool-results.js';
import type { KeptDecision } from './turn.approvals.js';
import type {
  ApprovalVerdict,
  Batch,
  ModelReply,
  PreparedCall,
  Settled,
  TurnEnding,
  TurnInput,
  TurnOutput,
} from './turn.types.js';

/**
 * The turn's context: everything the turn knows, in few keys of stable shape (a context of ~20
 * keys falls into V8's dictionary mode and every assign then copies a hash table). What the
 * effects produce comes back as actor outputs and is assigned here; the runtime keeps no copy.
 */
export interface TurnContext {
  /** What the master gave this attempt; never changes. */
  input: TurnInput;
  /** The model's reply (published, unless the turn deferred its failure to the master). */
  reply: ModelReply | null;
  /** The calls that cleared preprocessing and are not decided yet (or ran). */
  prepared: PreparedCall[];
  /** Every result decided so far. */
  settled: Settled | null;
  batch: Batch | null;
  /** The turn's decision, assigned where it is made; null while the turn runs. */
  ending: TurnEnding | null;
  /** A steering message was accepted during this turn: unless steering waits, no further tool call starts. */
  steered: boolean;
  /** Pre-turn injections: committed with this turn's input. */
  inputInjected: Message[];
  /** Later injections (pre-dispatch, post-turn): the next turn's input. */
  injected: Message[];
  /** The assistant message as committed (a post-turn policy may replace it). */
  assistant: AssistantMessage | null;
  /**
   * `resolveApproval` answers, kept until the turn waits for those calls (an answer may come first after a
   * restart); each decides its call once (a decided call no longer waits).
   */
  decisions: readonly KeptDecision[];
  /** Calls whose toolApprovalRequested was published (never asked twice, also across a restart). */
  asked: string[];
}

export type TurnEvent =
  | { type: 'ABORT' }
  | { type: 'STEERING_ARRIVED' }
  /**
   * From the approval effect, once per call in call order: its request can be published now (the step
   * that chose the calls is over).
   */
  | { type: 'APPROVAL_REQUESTED'; toolCallId: string }
  /** From the approval effect: the handler's verdict on one of the calls asked (already checked). */
  | { type: 'APPROVAL_VERDICT'; toolCallId: string; toolName: string; verdict: ApprovalVerdict }
  /** A durable approval answered by `agent.resolveApproval` (the verdict already checked). */
  | { type: 'APPROVAL_DECIDED'; toolCallId: string; verdict: ApprovalVerdict };

export function initialContext(input: TurnInput): TurnContext {
  return {
    input,
    reply: null,
    prepared: [],
    settled: null,
    batch: null,
    ending: null,
    steered: input.steeringArrived,
    inputInjected: [],
    injected: [],
    assistant: null,
    decisions: [],
    // Stryker disable next-line ArrayDeclaration: a stray id in a fresh turn's list matches no call
    asked: input.resume?.requestedCallIds ?? [],
  };
}

/** The output of an invoked actor, from its done event (the chart reads it only where one arrives). */
export function replyOf<T>(event: { type: string }): T {
  return (event as unknown as { output: T }).output;
}

/** The turn's ending as its output says it: the decision made, or (never expected) a plain success. */
export function ended(context: TurnContext): TurnEnding {
  return context.ending ?? { kind: 'success', turnEndReason: 'complete', error: null };
}

export type FailureDetail = 'retryable' | 'overflow' | 'fatal';

/**
 * The decision on a failed reply, from the done event that brought it. A deferred failure (the master re-runs
 * the turn) stays open and carries the model error: the guard that chose it read that error.
 */
export function failureOf(detail: FailureDetail, event: { type: string }): TurnEnding {
  const { error } = replyOf<ModelReply>(event);
  if (detail === 'fatal') return { kind: 'failure', detail, turnEndReason: 'error', error };
  return { kind: 'failure', detail, turnEndReason: null, error: error as ModelError };
}

/** The ids of the calls whose tool really started (synthetic results never count as work), in call order. */
export function startedCallIds(context: TurnContext): string[] {
  const ids: string[] = [];
  for (let cell = context.settled; cell; cell = cell.rest) if (cell.started) ids.push(cell.result.toolCallId);
  ids.reverse();
  const resumed = context.input.resume?.startedCallIds ?? [];
  return resumed.concat(ids.filter((id) => !resumed.includes(id)));
}

export function outputOf(context: TurnContext): TurnOutput {
  const ending = ended(context);
  const original = context.reply?.message ?? null;
  return {
    ...ending,
    assistant: context.assistant ?? original,
    toolResults: resultsInCallOrder(original, context.settled),
    injected: context.injected,
    startedCallIds: startedCallIds(context),
  };
}

/** How a turn resumed with a published reply ends, read from that reply: as the turn would have. */
export function resumedEnding(reply: ModelReply | null): TurnEnding {
  const stopReason = reply?.message.stopReason;
  if (reply?.error?.kind === 'aborted' || stopReason === 'aborted')
    return { kind: 'aborted', turnEndReason: 'aborted', error: null };
  if (reply?.error || stopReason === 'error')
    return { kind: 'failure', detail: 'fatal', turnEndReason: 'error', error: reply?.error ?? null };
  if (reply && toolCallsOf(reply.message).length > 0)
    return { kind: 'success', turnEndReason: 'toolsExecuted', error: null };
  return { kind: 'success', turnEndReason: 'complete', error: null };
}
