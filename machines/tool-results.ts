import type { AssistantMessage, ToolCallBlock, ToolResultMessage } from '../src/domain/messages.js';
import { toolCallsOf } from '../src/domain/messages.js';
import type { ResultsByPosition, Settled } from './turn.types.js';

/** Why a call that never finished got a synthetic result. The text is what the model reads. */
export type UnfinishedReason =
  | { kind: 'aborted' }
  | { kind: 'stopped'; reason: string }
  | { kind: 'invalidPartition'; reason: string }
  | { kind: 'steering' }
  | { kind: 'steeringSkipped' }
  | { kind: 'replyFailed' };

export function unfinishedText(reason: UnfinishedReason): string {
  switch (reason.kind) {
    case 'aborted':
      return 'aborted: the run was cancelled before this tool call finished';
    case 'stopped':
      return `stopped before dispatch: ${reason.reason}`;
    case 'invalidPartition':
      return `invalid partition: ${reason.reason}`;
    case 'steering':
      return 'cancelled: steering (the user sent a new message; this call was interrupted)';
    case 'steeringSkipped':
      return 'skipped: steering (the user sent a new message before this call started)';
    case 'replyFailed':
      return 'not run: the model reply failed before this call could run';
  }
}

/** What a denied approval's call reads: the reason follows the prefix (a chat UI shows it as the denial's reason). */
export const REJECTED_PREFIX = 'rejected: ';

export function rejectedText(reason: string): string {
  return `${REJECTED_PREFIX}${reason}`;
}

export function errorResult(call: Pick<ToolCallBlock, 'id' | 'name'>, content: string): ToolResultMessage {
  return { role: 'toolResult', toolCallId: call.id, toolName: call.name, content, isError: true };
}

export function timedOutText(timeoutMs: number): string {
  return `timed out after ${timeoutMs} ms`;
}

/** One more result, in front of the ones before (nothing is copied). */
export function settle(
  settled: Settled | null,
  position: number,
  result: ToolResultMessage,
  published = false,
  started = false,
): Settled {
  return { position, result, published, started, rest: settled };
}

/** Results by position (the first recorded for a position wins: a result is never replaced). */
export function settledByPosition(settled: Settled | null): Map<number, Settled> {
  const cells: Settled[] = [];
  for (let cell = settled; cell; cell = cell.rest) cells.push(cell);
  const byPosition = new Map<number, Settled>();
  for (let index = cells.length - 1; index >= 0; index--) {
    const cell = cells[index] as Settled;
    if (!byPosition.has(cell.position)) byPosition.set(cell.position, cell);
  }
  return byPosition;
}

/** A settled list holding a resumed turn's results: the published ones, then the replay rule's (not published yet). */
export function settledFrom(published: ResultsByPosition, notRerun: ResultsByPosition): Settled | null {
  let settled: Settled | null = null;
  // In any order: results are read by position, and these cells never count as started calls.
  for (const [position, result] of published) settled = settle(settled, position, result, true);
  for (const [position, result] of notRerun) settled = settle(settled, position, result);
  return settled;
}

/**
 * Gives every tool call of the reply that has no result yet one synthetic error result (no reply: no calls).
 * Returns the list unchanged when every call has one.
 */
export function settleUnfinished(
  reply: { message: AssistantMessage } | null,
  settled: Settled | null,
  reason: UnfinishedReason,
): Settled | null {
  if (!reply) return settled;
  const calls = toolCallsOf(reply.message);
  const decided = settledByPosition(settled);
  const text = unfinishedText(reason);
  let next = settled;
  calls.forEach((call, position) => {
    // Stryker disable next-line ConditionalExpression: a second cell for a position is shadowed by the first one
    if (!decided.has(position)) next = settle(next, position, errorResult(call, text));
  });
  return next;
}

/** The results in call order (parity: one per tool call of the assistant message that has one). */
export function resultsInCallOrder(assistant: AssistantMessage | null, settled: Settled | null): ToolResultMessage[] {
  if (!assistant || !settled) return [];
  const decided = settledByPosition(settled);
  const ordered: ToolResultMessage[] = [];
  for (const position of toolCallsOf(assistant).keys()) {
    const cell = decided.get(position);
    if (cell) ordered.push(cell.result);
  }
  return ordered;
}

/** The synthetic results in call order: the ones no tool-call actor published (they are published at commit). */
export function syntheticInCallOrder(assistant: AssistantMessage | null, settled: Settled | null): ToolResultMessage[] {
  if (!assistant || !settled) return [];
  const decided = settledByPosition(settled);
  return [...decided.keys()]
    .sort((a, b) => a - b)
    .flatMap((position) => {
      const cell = decided.get(position) as Settled;
      return cell.published ? [] : [cell.result];
    });
}
