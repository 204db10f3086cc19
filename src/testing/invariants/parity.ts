import type { AgentEventOf, Message } from '../../domain/index.js';
import { type CallRef, callsOf, describeCalls, isMessageObject, type LoggedEvent } from './common.js';

/** A committed tool result and where it sits (`history message 4`, `turnEnd at seq 9 toolResults[1]`). */
export interface ResultRef {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly at: string;
}

/**
 * Checks that `results` answer `calls` exactly once each, in call order, and nothing else.
 * `owner` names the assistant (`assistant at history message 1`); `missingWhere` says where the
 * result was due (`before the next assistant message (history message 5)`).
 */
export function checkAnswers(
  owner: string,
  calls: readonly CallRef[],
  results: readonly ResultRef[],
  missingWhere: string,
  out: string[],
): void {
  const position = new Map<string, number>();
  calls.forEach((call, i) => {
    if (position.has(call.id)) out.push(`parity: ${owner} has two tool calls with id ${call.id}`);
    else position.set(call.id, i);
  });
  const answered = new Map<string, ResultRef>();
  let lastAnswered = -1;
  for (const result of results) {
    const index = position.get(result.toolCallId);
    if (index === undefined) {
      out.push(
        `parity: orphan result for ${result.toolCallId} (${result.toolName}) at ${result.at}: not a tool call of ${owner}`,
      );
      continue;
    }
    const call = calls[index];
    const earlier = answered.get(result.toolCallId);
    if (earlier) {
      out.push(
        `parity: duplicate result for tool call ${call.id} (${call.name}) of ${owner} at ${result.at} (first at ${earlier.at})`,
      );
      continue;
    }
    answered.set(result.toolCallId, result);
    if (result.toolName !== call.name) {
      out.push(
        `parity: result for tool call ${call.id} at ${result.at} names tool ${result.toolName} but the call is ${call.name}`,
      );
    }
    if (index < lastAnswered) {
      const before = calls[lastAnswered];
      out.push(
        `parity: result for tool call ${call.id} (${call.name}) at ${result.at} is out of call order: ` +
          `call ${index + 1} of ${owner} answered after call ${lastAnswered + 1} (${before.id})`,
      );
    } else {
      lastAnswered = index;
    }
  }
  for (const call of calls) {
    if (!answered.has(call.id))
      out.push(`parity: tool call ${call.id} (${call.name}) of ${owner} has no result ${missingWhere}`);
  }
}

/**
 * History parity: every assistant's tool calls are answered by the toolResult messages that follow
 * it, before the next assistant message (other messages may sit between). `label` names the
 * history: `history` or `agentEnd.messages of run r1 (seq 12)`.
 */
export function checkHistoryParity(messages: readonly Message[], label: string, out: string[]): void {
  let owner: { name: string; calls: CallRef[]; results: ResultRef[] } | null = null;
  const close = (missingWhere: string): void => {
    if (owner) checkAnswers(owner.name, owner.calls, owner.results, missingWhere, out);
  };
  messages.forEach((message, i) => {
    if (!isMessageObject(message)) return;
    const at = `${label} message ${i}`;
    if (message.role === 'assistant') {
      close(`before the next assistant message (${at})`);
      owner = { name: `assistant at ${at}`, calls: callsOf(message), results: [] };
    } else if (message.role === 'toolResult') {
      const result = { toolCallId: String(message.toolCallId), toolName: String(message.toolName), at };
      if (owner) owner.results.push(result);
      else
        out.push(
          `parity: orphan result for ${result.toolCallId} (${result.toolName}) at ${at}: no assistant message precedes it`,
        );
    }
  });
  close(`before ${label} ends`);
}

/**
 * Event-log parity at a turnEnd: its toolResults answer its assistant's tool calls exactly once, in
 * call order; and the committed tool calls are the ones the turn's messageEnd streamed (a
 * post-turn replacement may change text, never tool-call blocks).
 */
export function checkTurnEndParity(
  turnEnd: LoggedEvent & { event: AgentEventOf<'turnEnd'> },
  streamed: (LoggedEvent & { event: AgentEventOf<'messageEnd'> }) | null,
  out: string[],
): void {
  const { event, at } = turnEnd;
  const owner = `the assistant of turnEnd at ${at}`;
  const results: ResultRef[] = (Array.isArray(event.toolResults) ? event.toolResults : []).map((result, i) => ({
    toolCallId: String(result?.toolCallId),
    toolName: String(result?.toolName),
    at: `turnEnd at ${at} toolResults[${i}]`,
  }));
  if (event.assistant == null) {
    for (const result of results) {
      out.push(
        `parity: orphan result for ${result.toolCallId} (${result.toolName}) at ${result.at}: the turnEnd has no assistant`,
      );
    }
    return;
  }
  const calls = callsOf(event.assistant);
  checkAnswers(owner, calls, results, 'in its toolResults', out);
  if (streamed) {
    const streamedCalls = callsOf(streamed.event.message);
    const same =
      streamedCalls.length === calls.length &&
      streamedCalls.every((call, i) => call.id === calls[i].id && call.name === calls[i].name);
    if (!same) {
      out.push(
        `parity: turnEnd at ${at} commits tool calls ${describeCalls(calls)} but messageEnd at ${streamed.at} streamed ${describeCalls(streamedCalls)}`,
      );
    }
  }
}
