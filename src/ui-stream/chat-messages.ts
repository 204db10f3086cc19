import { REJECTED_PREFIX } from '../../machines/tool-results.js';
import type { AgentEvent, AgentEventBody } from '../domain/events.js';
import type { AssistantMessage, Message, ToolResultMessage } from '../domain/messages.js';
import type { PendingApproval } from '../store/types.js';
import type { OpenTurn } from './open-turn.js';
import type { UIStreamSdk } from './sdk.js';
import { RunTranslator } from './translate.js';
import type { AgentchartUIChunk, AgentchartUIMessage } from './types.js';

/**
 * The conversation as `UIMessage`s, for a page that loads (or reloads) a chat: each user message,
 * then one assistant message for what answered it — a step per turn, in the same parts a live
 * response writes (the same translation, read by `ai`'s own readUIMessageStream). A run in progress
 * adds its open turn (text so far, calls, approvals waiting for the user).
 */
export async function chatMessages(
  sdk: UIStreamSdk,
  history: readonly Message[],
  open: OpenTurn | null,
): Promise<AgentchartUIMessage[]> {
  const messages: AgentchartUIMessage[] = [];
  let group: { id: string; events: AgentEventBody[] } | null = null;
  const flush = async () => {
    if (group) messages.push(await assistantMessage(sdk, group.id, group.events, []));
    group = null;
  };
  for (const [index, message] of history.entries()) {
    if (message.role === 'user') {
      await flush();
      messages.push({ id: `m${index}`, role: 'user', parts: [{ type: 'text', text: message.content }] });
    } else if (message.role === 'assistant') {
      group ??= { id: `m${index}`, events: [] };
      group.events.push(...turnEvents(message, resultsAfter(history, index)));
    }
  }
  if (!open || open.events.length === 0) {
    await flush();
    return messages;
  }
  const current: { id: string; events: AgentEventBody[] } = group ?? { id: `m${history.length}`, events: [] };
  messages.push(await assistantMessage(sdk, current.id, current.events, open.events, open.pendingApprovals));
  return messages;
}

/** The events a committed turn would have published: what the translator needs to write its step. */
function turnEvents(assistant: AssistantMessage, results: ToolResultMessage[]): AgentEventBody[] {
  const turnIndex = 0;
  const events: AgentEventBody[] = [
    { type: 'turnStart', turnIndex },
    { type: 'messageEnd', turnIndex, message: assistant },
  ];
  for (const result of results) {
    const { toolCallId, toolName, content, isError } = result;
    // A denied call is shown as the user's denial, with its reason.
    if (isError && content.startsWith(REJECTED_PREFIX)) {
      events.push(
        { type: 'toolApprovalRequested', turnIndex, toolCallId, toolName, arguments: {} },
        { type: 'toolApprovalResolved', turnIndex, toolCallId, toolName, approved: false },
      );
    }
    events.push({ type: 'toolExecutionEnd', turnIndex, toolCallId, toolName, result: content, isError });
  }
  events.push({ type: 'turnEnd', turnIndex, reason: 'complete', assistant, toolResults: results });
  return events;
}

function resultsAfter(history: readonly Message[], index: number): ToolResultMessage[] {
  const results: ToolResultMessage[] = [];
  for (let next = index + 1; history[next]?.role === 'toolResult'; next++)
    results.push(history[next] as ToolResultMessage);
  return results;
}

async function assistantMessage(
  sdk: UIStreamSdk,
  id: string,
  committed: readonly AgentEventBody[],
  open: readonly AgentEvent[],
  pending: readonly PendingApproval[] = [],
): Promise<AgentchartUIMessage> {
  const chunks: AgentchartUIChunk[] = [{ type: 'start', messageId: id }];
  const translator = new RunTranslator(sdk.dialect, (chunk) => chunks.push(chunk));
  // A denial in the history was an answer to a request (its version no longer matters).
  const answered = { version: 0 };
  committed.forEach((event, seq) => {
    const stamped = { ...event, runId: 'history', seq } as AgentEvent;
    translator.translate(stamped, event.type === 'toolApprovalRequested' ? answered : undefined);
  });
  for (const event of open) {
    const waiting =
      event.type === 'toolApprovalRequested' ? pending.find((p) => p.toolCallId === event.toolCallId) : undefined;
    translator.translate(event, waiting && !waiting.elicitation ? { version: waiting.version } : undefined);
  }
  const stream = new ReadableStream<AgentchartUIChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let message: AgentchartUIMessage = { id, role: 'assistant', parts: [] };
  for await (const snapshot of sdk.readUIMessageStream<AgentchartUIMessage>({ stream })) message = snapshot;
  return message;
}
