import type { EndReason } from '../domain/events.js';
import { textOf, toolCallsOf } from '../domain/messages.js';
import type { FinalReport, TurnOutcome } from '../domain/outcomes.js';
import type { ToolRegistry } from '../tools/registry.js';
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

/**
 * Report mode: the one message the re-run of a turn that did no work gets, in place of that turn
 * (which leaves history). It names the report tool and, for each call of the discarded reply, why
 * it did not count: the model would otherwise never see an unknown tool's or invalid arguments' error.
 */
export function reportGuidance(
  reportToolName: string,
  failed: Pick<TurnOutcome, 'assistant' | 'toolResults'> | null,
  registry: ToolRegistry,
): string {
  const ending = `Report mode: continue the task with the tools available, and end by calling the report tool "${reportToolName}" with valid arguments.`;
  const calls = failed?.assistant ? toolCallsOf(failed.assistant) : [];
  if (calls.length === 0) return `Your last reply called no tool, so it did not count. ${ending}`;
  const reasons = calls.map((call) => {
    const result = failed?.toolResults.find((r) => r.toolCallId === call.id);
    if (registry.get(call.name)?.progress && result && !result.isError) return `${call.name}: a progress report only`;
    return `${call.name}: ${result?.content ?? 'it did not run'}`;
  });
  return `Your last reply ran no tool that counts as work and sent no valid report, so it did not count (${reasons.join('; ')}). ${ending}`;
}

/** A report tool marked `progress: true` would let a failed report vanish with its turn: refused up front. */
export function reportToolProblem(reportToolName: string | undefined, registry: ToolRegistry): string | null {
  if (!reportToolName || !registry.get(reportToolName)?.progress) return null;
  return (
    `createAgent: finalReport.toolName: the report tool "${reportToolName}" is marked progress: true; ` +
    'a report is never a progress report (a failed report call would be discarded with its turn). Remove progress from it.'
  );
}
