import type { AssistantMessage, ToolCallBlock, ToolResultMessage } from '../src/domain/messages.js';
import { toolCallsOf } from '../src/domain/messages.js';
import type { ResultsByPosition } from './turn.types.js';

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

export function errorResult(call: Pick<ToolCallBlock, 'id' | 'name'>, content: string): ToolResultMessage {
  return { role: 'toolResult', toolCallId: call.id, toolName: call.name, content, isError: true };
}

/** Gives every tool call of `assistant` that has no result yet one synthetic error result. */
export function settleUnfinished(
  assistant: AssistantMessage | null,
  results: ResultsByPosition,
  reason: UnfinishedReason,
): ResultsByPosition {
  if (!assistant) return results;
  const calls = toolCallsOf(assistant);
  if (results.size === calls.length) return results;
  const settled = new Map(results);
  const text = unfinishedText(reason);
  calls.forEach((call, position) => {
    if (!settled.has(position)) settled.set(position, errorResult(call, text));
  });
  return settled;
}

/** The results in call order (parity: one per tool call of the assistant message). */
export function resultsInCallOrder(assistant: AssistantMessage | null, results: ResultsByPosition): ToolResultMessage[] {
  if (!assistant || results.size === 0) return [];
  const ordered: ToolResultMessage[] = [];
  const count = toolCallsOf(assistant).length;
  for (let position = 0; position < count; position++) {
    const result = results.get(position);
    if (result) ordered.push(result);
  }
  return ordered;
}

export function timedOutText(timeoutMs: number): string {
  return `timed out after ${timeoutMs} ms`;
}
