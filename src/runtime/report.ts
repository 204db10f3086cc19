import type { EndReason } from '../domain/events.js';
import { textOf, toolCallsOf } from '../domain/messages.js';
import type { FinalReport } from '../domain/outcomes.js';
import type { AgentState } from './run-session.js';

/**
 * Report mode: the model's accepted report (its last successful report-tool call), or — when the
 * session ended without one — a synthetic report. Produced by the entry point, never the machines.
 */
export function finalReportOf(state: AgentState, endReason: EndReason): FinalReport | undefined {
  const toolName = state.options.finalReport?.toolName;
  if (!toolName) return undefined;
  const history = state.history;
  if (endReason === 'finalReport') {
    for (let i = history.length - 1; i >= 0; i--) {
      const message = history[i];
      if (message?.role !== 'toolResult' || message.toolName !== toolName || message.isError) continue;
      for (let j = i - 1; j >= 0; j--) {
        const candidate = history[j];
        if (candidate?.role !== 'assistant') continue;
        const call = toolCallsOf(candidate).find((c) => c.id === message.toolCallId);
        if (call) return { source: 'model', arguments: call.arguments };
        break;
      }
    }
  }
  const lastAssistant = [...history].reverse().find((m) => m.role === 'assistant');
  return {
    source: 'synthetic',
    arguments: {
      status: 'failed',
      reason: endReason,
      lastAssistantText: lastAssistant?.role === 'assistant' ? textOf(lastAssistant) : '',
    },
  };
}
