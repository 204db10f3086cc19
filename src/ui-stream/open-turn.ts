import type { AgentEvent } from '../domain/events.js';
import type { Agent, AgentRun } from '../runtime/agent.js';
import type { PendingApproval, SessionStore } from '../store/types.js';
import { chatMessages } from './chat-messages.js';
import type { UIStreamSdk } from './sdk.js';
import type { AgentchartUIMessage } from './types.js';

/** The turn a chat's run is in (not in the history yet): its events so far, and the approvals it waits for. */
export interface OpenTurn {
  events: AgentEvent[];
  pendingApprovals: PendingApproval[];
}

/** The approvals the user answers (a running call's question is not one of them). */
export function approvalsAwaited(agent: Pick<Agent, 'pendingApprovals'>): PendingApproval[] {
  return agent.pendingApprovals().filter((approval) => !approval.elicitation);
}

/**
 * The open turn of the chat's run: from the run itself when it runs in this process (its replay),
 * else — a run parked at an approval, its handle gone — from the store's events, or, without the
 * store, the calls the approvals wait for.
 */
export async function openTurnOf(
  agent: Pick<Agent, 'pendingApprovals'>,
  run: AgentRun | null,
  stored: { store: SessionStore; sessionId: string } | null,
): Promise<OpenTurn | null> {
  const pendingApprovals = approvalsAwaited(agent);
  if (run) return { events: lastOpenTurn(replayOf(run)), pendingApprovals };
  if (pendingApprovals.length === 0) return null;
  if (stored) {
    const events = lastOpenTurn(lastRun(await stored.store.loadEvents(stored.sessionId)));
    if (events.length > 0) return { events, pendingApprovals };
  }
  return { events: awaitedCalls(pendingApprovals), pendingApprovals };
}

/** The conversation as the store holds it, read without an agent (a run of the chat in progress on another server). */
export async function storedMessages(
  sdk: UIStreamSdk,
  { store, sessionId }: { store: SessionStore; sessionId: string },
): Promise<AgentchartUIMessage[]> {
  const [checkpoint, events] = await Promise.all([store.load(sessionId), store.loadEvents(sessionId)]);
  const open = lastOpenTurn(lastRun(events));
  return chatMessages(sdk, checkpoint?.history ?? [], open.length > 0 ? { events: open, pendingApprovals: [] } : null);
}

function replayOf(run: AgentRun): AgentEvent[] {
  const events: AgentEvent[] = [];
  run.events.subscribe((event) => events.push(event)).unsubscribe();
  return events;
}

/** The events of the session's last run (after its last agentStart). */
function lastRun(events: AgentEvent[]): AgentEvent[] {
  let start = events.length - 1;
  while (start >= 0 && events[start]?.type !== 'agentStart') start--;
  return start < 0 ? [] : events.slice(start);
}

/** The events of the turn in progress (none between turns, or once the run ended). */
function lastOpenTurn(events: AgentEvent[]): AgentEvent[] {
  let start = events.length - 1;
  while (start >= 0 && events[start]?.type !== 'turnStart') start--;
  const tail = start < 0 ? [] : events.slice(start);
  return tail.some((event) => event.type === 'turnEnd' || event.type === 'agentEnd') ? [] : tail;
}

/** Without the store: the calls the approvals wait for, as a step of their own (the reply's text and other calls aside). */
function awaitedCalls(pending: PendingApproval[]): AgentEvent[] {
  const runId = 'parked';
  const turnIndex = 0;
  const content = pending.map((approval) => ({
    type: 'toolCall' as const,
    id: approval.toolCallId,
    name: approval.toolName,
    arguments: approval.arguments,
  }));
  return [
    { type: 'turnStart', runId, seq: 0, turnIndex },
    { type: 'messageEnd', runId, seq: 0, turnIndex, message: { role: 'assistant', content, stopReason: 'toolUse' } },
    ...pending.map((approval): AgentEvent => ({
      type: 'toolApprovalRequested',
      runId,
      seq: 0,
      turnIndex,
      toolCallId: approval.toolCallId,
      toolName: approval.toolName,
      arguments: approval.arguments,
    })),
  ];
}
