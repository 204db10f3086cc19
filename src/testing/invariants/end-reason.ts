import type { AgentEventOf, Message } from '../../domain/index.js';
import { callsOf, describeCalls, findAgentEnd, isMessageObject, type RunLog } from './common.js';

type TurnEnd = AgentEventOf<'turnEnd'>;

/**
 * "Tools never end the loop": a turn ends 'complete' only on a model reply with
 * no tool calls, and a run ends 'naturalEnd' only after such a turn, with no unanswered tool calls
 * left at the tail of history. Also ties status to endReason where the contract fixes it.
 * `history` is the committed history to judge the run by (agentEnd.messages, or the caller's).
 */
export function checkEndReason(run: RunLog, history: readonly Message[] | null, out: string[]): void {
  let lastTurnEnd: { event: TurnEnd; at: string } | null = null;
  for (const { event, at } of run.events) {
    if (event.type !== 'turnEnd') continue;
    lastTurnEnd = { event, at };
    if (event.reason !== 'complete') continue;
    if (event.assistant == null) {
      out.push(`endReason: turnEnd at ${at} ended complete without an assistant message`);
    } else if (callsOf(event.assistant).length > 0) {
      out.push(
        `endReason: turnEnd at ${at} ended complete but its assistant has tool calls ${describeCalls(callsOf(event.assistant))}`,
      );
    }
  }

  const agentEnd = findAgentEnd(run);
  if (!agentEnd) return;
  const { status, endReason } = agentEnd.event;
  const where = `run ${run.runId} (agentEnd at ${agentEnd.at})`;

  if ((endReason === 'aborted') !== (status === 'aborted')) {
    out.push(`endReason: ${where} has status ${status} with endReason ${endReason}; aborted goes with aborted only`);
  } else if ((endReason === 'naturalEnd' || endReason === 'finalReport') && status !== 'completed') {
    out.push(`endReason: ${where} has status ${status} with endReason ${endReason}; it must be completed`);
  }

  if (endReason !== 'naturalEnd') return;
  if (!lastTurnEnd) {
    out.push(`endReason: ${where} ended naturalEnd without any turnEnd`);
  } else if (lastTurnEnd.event.reason !== 'complete') {
    out.push(
      `endReason: ${where} ended naturalEnd but its last turn (turnEnd at ${lastTurnEnd.at}) ended ${lastTurnEnd.event.reason}`,
    );
  }
  const lastAssistant = [...(history ?? [])].reverse().find((m) => isMessageObject(m) && m.role === 'assistant');
  if (lastAssistant && lastAssistant.role === 'assistant' && callsOf(lastAssistant).length > 0) {
    out.push(
      `endReason: ${where} ended naturalEnd but the last assistant message in history has tool calls ${describeCalls(callsOf(lastAssistant))}`,
    );
  }
}
