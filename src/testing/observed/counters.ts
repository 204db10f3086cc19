import type { Observed } from './types.js';

/** Counters agree with the history, the log and what the world saw. */
export function checkCounters({ agent, events, world, sent, modelCallsPerTurn }: Observed, out: string[]): void {
  const c = agent.counters;
  const history = agent.messages;
  const delivered = (source: 'steering' | 'followUp') =>
    sent.filter((m) => m.source === source && history.some((h) => h.role === 'user' && h.content === m.text)).length;
  if (c.steeringDelivered !== delivered('steering'))
    out.push(
      `counters: steeringDelivered ${c.steeringDelivered} ≠ ${delivered('steering')} steering messages in history`,
    );
  if (c.followUpsDelivered !== delivered('followUp'))
    out.push(`counters: followUpsDelivered ${c.followUpsDelivered} ≠ ${delivered('followUp')} follow-ups in history`);
  if (world) {
    const aborts = events.filter((e) => e.type === 'agentEnd' && e.status === 'aborted').length;
    const requests = world.requests.length;
    if (requests > c.modelCalls)
      out.push(
        `counters: the models got ${requests} requests but modelCalls is ${c.modelCalls} (a model was called after its run ended?)`,
      );
    if (c.modelCalls > requests + aborts)
      out.push(`counters: modelCalls ${c.modelCalls} > ${requests} requests + ${aborts} aborted runs`);
    const startedIds = new Set(events.flatMap((e) => (e.type === 'toolExecutionStart' ? [e.toolCallId] : [])));
    for (const id of world.executions)
      if (!startedIds.has(id)) out.push(`counters: tool call ${id} ran without a toolExecutionStart`);
    if (world.executions.length > c.toolCallsExecuted)
      out.push(`counters: ${world.executions.length} tool executions > toolCallsExecuted ${c.toolCallsExecuted}`);
    // A request an abort resolved before the handler was asked counts as requested, not asked.
    const abortedRequests = events.filter((e) => e.type === 'toolApprovalResolved' && !e.approved).length;
    const asked = world.approvalCalls;
    if (asked && (asked.length > c.approvalsRequested || asked.length < c.approvalsRequested - abortedRequests)) {
      out.push(`counters: the approval handler ran ${asked.length}× but approvalsRequested is ${c.approvalsRequested}`);
    }
  }
  const turnStarts = events.filter((e) => e.type === 'turnStart').length;
  if (c.turns !== turnStarts) out.push(`counters: turns ${c.turns} ≠ ${turnStarts} turnStart events`);
  if (agent.snapshot().turnIndex !== c.turns)
    out.push(`counters: the agent's turnIndex ${agent.snapshot().turnIndex} ≠ ${c.turns} turns`);
  // Per turn: maxAttempts per model, one overflow re-run (R4: retries are never multiplied).
  const perTurn = new Map<string, number>();
  for (const e of events)
    if (e.type === 'beforeModelCall')
      perTurn.set(`${e.runId}#${e.turnIndex}`, (perTurn.get(`${e.runId}#${e.turnIndex}`) ?? 0) + 1);
  for (const [turn, calls] of perTurn)
    if (calls > modelCallsPerTurn) out.push(`counters: turn ${turn} made ${calls} model calls > ${modelCallsPerTurn}`);
  for (const [key, value] of Object.entries(c)) {
    if (typeof value === 'number' && !(value >= 0)) out.push(`counters: ${key} is ${value}`);
  }
  const failures = Object.values(c.failureCodes).reduce((sum, n) => sum + n, 0);
  if (failures > c.modelCalls) out.push(`counters: ${failures} failure codes > ${c.modelCalls} model calls`);
}
