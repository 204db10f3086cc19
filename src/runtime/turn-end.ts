import type { TurnEndReason } from '../domain/events.js';
import type { AssistantMessage, ToolResultMessage } from '../domain/messages.js';
import type { RunDeps } from './run-registry.js';

/**
 * The one place turnEnd is published: for the turn machine's `done` state, and for the runtime's
 * net after an internal error (the machines could not close the turn themselves).
 */
export function publishTurnEnd(
  run: RunDeps,
  turn: {
    turnIndex: number;
    reason: TurnEndReason;
    assistant: AssistantMessage | null;
    toolResults: ToolResultMessage[];
  },
): void {
  run.emit({
    type: 'turnEnd',
    turnIndex: turn.turnIndex,
    reason: turn.reason,
    assistant: turn.assistant,
    toolResults: turn.toolResults,
  });
}
