import type { AgentEvent } from '../../domain/events.js';
import type { Property, Step } from './types.js';

/**
 * The arguments approved for each tool call of a path: those the request showed, or those the
 * explorer's answer gave (`{ approved: true, arguments }`); an approval the agent's own handler gave
 * counts with the request's arguments. Calls denied or never asked are absent.
 */
export function approvedArguments(
  log: readonly AgentEvent[],
  steps: readonly Step[],
): Map<string, Record<string, unknown>> {
  const asked = new Map<string, Record<string, unknown>>();
  const approved = new Map<string, Record<string, unknown>>();
  for (const event of log) {
    if (event.type === 'toolApprovalRequested') asked.set(event.toolCallId, event.arguments);
    if (event.type !== 'toolApprovalResolved' || !event.approved) continue;
    const args = asked.get(event.toolCallId);
    if (args) approved.set(event.toolCallId, args);
  }
  for (const step of steps) {
    if (step.kind !== 'approval' || !step.value.approved) continue;
    const args = 'arguments' in step.value ? step.value.arguments : asked.get(step.toolCallId);
    if (args) approved.set(step.toolCallId, args);
  }
  return approved;
}

/**
 * A property: each of these tools runs only after a human approved that call, and only with the
 * arguments they approved (a policy that changes them after the approval breaks it).
 */
export function ranOnlyAsApproved(...toolNames: string[]): Property {
  const guarded = new Set(toolNames);
  return (log, _messages, { steps }) => {
    const approved = approvedArguments(log, steps);
    for (const event of log) {
      if (event.type !== 'toolExecutionStart' || !guarded.has(event.toolName)) continue;
      const args = approved.get(event.toolCallId);
      if (!args) return `${event.toolName} (${event.toolCallId}) ran without an approval`;
      if (JSON.stringify(args) !== JSON.stringify(event.arguments)) {
        return `${event.toolName} (${event.toolCallId}) ran with ${JSON.stringify(event.arguments)}, approved: ${JSON.stringify(args)}`;
      }
    }
  };
}
