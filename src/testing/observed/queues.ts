import type { Message } from '../../domain/messages.js';
import type { Observed } from './types.js';

/**
 * Nothing lost: every steering / follow-up message sent is in the history exactly once or
 * still in its own queue, and its receipt tells the truth (delivered ⇒ committed, and carried by
 * the model call of the turn it names; still queued ⇒ not committed when it resolved).
 */
export function checkQueues({ agent, sent, events }: Observed, out: string[]): void {
  const history = agent.messages;
  const snapshot = agent.snapshot();
  const count = (messages: readonly Message[], text: string) =>
    messages.filter((m) => m.role === 'user' && m.content === text).length;
  for (const message of sent) {
    const inHistory = count(history, message.text);
    const ownQueue = message.source === 'steering' ? snapshot.steeringQueue : snapshot.followUpQueue;
    const otherQueue = message.source === 'steering' ? snapshot.followUpQueue : snapshot.steeringQueue;
    const queued = count(ownQueue, message.text);
    const where = `"${message.text}" (in history ${inHistory}×, queued ${queued}×)`;
    if (inHistory + queued === 0) out.push(`nothing lost: ${where} was dropped`);
    if (inHistory + queued > 1) out.push(`nothing lost: ${where} is there more than once`);
    if (count(otherQueue, message.text) > 0) out.push(`nothing lost: ${where} sits in the wrong queue`);
    const receipt = message.receipt;
    if (!receipt) {
      out.push(`receipt: ${where} never got a receipt though no run is active`);
      continue;
    }
    if (receipt.status === 'delivered') {
      if (inHistory !== 1)
        out.push(`receipt: ${where} is reported delivered (turn ${receipt.turnIndex}) but is not in history once`);
      // The model call of the turn the receipt names (if that turn made one) carries the message.
      const callOfTurn = events.find((e) => e.type === 'beforeModelCall' && e.turnIndex === receipt.turnIndex);
      if (
        callOfTurn?.type === 'beforeModelCall' &&
        !callOfTurn.messages.some((m) => m.role === 'user' && m.content === message.text)
      ) {
        out.push(
          `receipt: ${where} is reported delivered in turn ${receipt.turnIndex} but that turn's model call (seq ${callOfTurn.seq}) did not carry it`,
        );
      }
      if (!message.inHistoryWhenResolved) out.push(`receipt: ${where} was reported delivered before it was committed`);
    } else if (message.inHistoryWhenResolved) {
      out.push(`receipt: ${where} is reported still queued though it was already committed`);
    }
  }
}
