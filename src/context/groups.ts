import type { Message } from '../domain/messages.js';

/**
 * Splits a history into the units compaction keeps or drops whole, returned as the start index of
 * each unit. A unit is one message, plus — after an assistant message — the tool results that
 * follow it and any custom notes that arrive while its calls are still unanswered. Every tool
 * result joins the unit before it, so no unit (and no kept window) starts with a tool result,
 * unless the history itself does. O(n).
 */
export function groupStarts(messages: readonly Message[]): number[] {
  const starts: number[] = [];
  let pending = new Set<string>();

  messages.forEach((message, index) => {
    const joinsCurrent =
      index > 0 && (message.role === 'toolResult' || (message.role === 'custom' && pending.size > 0));
    if (message.role === 'toolResult') pending.delete(message.toolCallId);
    if (joinsCurrent) return;

    starts.push(index);
    pending = new Set();
    if (message.role === 'assistant') {
      for (const block of message.content) if (block.type === 'toolCall') pending.add(block.id);
    }
  });
  return starts;
}
