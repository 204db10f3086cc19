import type { Message } from '../domain/messages.js';

export type ParityCheck = { ok: true } | { ok: false; violations: string[] };

/**
 * Tool-call/result parity of a history (the parity invariant of checkInvariants), as a provider
 * needs it: every tool call of an assistant message is answered by exactly one tool result with its
 * id before the next assistant message or the end of the history, and every tool result answers a
 * pending call of the latest assistant message (no orphans, no duplicates). O(n).
 */
export function checkToolParity(messages: readonly Message[]): ParityCheck {
  const violations: string[] = [];
  let pending = new Set<string>();
  let owner = -1;

  const closeOwner = (at: string) => {
    for (const id of pending) violations.push(`tool call ${id} of message ${owner} has no result before ${at}`);
    pending = new Set();
  };

  messages.forEach((message, index) => {
    if (message.role === 'assistant') {
      closeOwner(`message ${index}`);
      owner = index;
      for (const block of message.content) {
        if (block.type !== 'toolCall') continue;
        if (pending.has(block.id)) violations.push(`message ${index} repeats tool call id ${block.id}`);
        pending.add(block.id);
      }
    } else if (message.role === 'toolResult') {
      if (pending.delete(message.toolCallId)) return;
      violations.push(`tool result ${message.toolCallId} at message ${index} answers no pending tool call`);
    }
  });
  closeOwner('the end of the history');

  return violations.length === 0 ? { ok: true } : { ok: false, violations };
}
