// Builders for hand-made event logs used by check-invariants.test.ts.
import type {
  AgentEvent,
  AgentEventType,
  AssistantMessage,
  Counters,
  EndReason,
  Message,
  RunStatus,
  ToolCallBlock,
  ToolResultMessage,
  Usage,
} from 'agentchart';
import { zeroCounters } from 'agentchart/model-kit';
import type { TurnEndReason } from '../../src/domain/events.js';
import { checkInvariants } from 'agentchart/testing';

/** An event before stamping: no runId/seq; turnIndex is filled from the open turn when absent. */
export type Draft = { type: AgentEventType; turnIndex?: number } & Record<string, unknown>;

export const user = (content: string): Message => ({ role: 'user', content });
export const call = (id: string, name: string): ToolCallBlock => ({ type: 'toolCall', id, name, arguments: {} });
export const text = (value: string) => ({ type: 'text' as const, text: value });
export function assistant(content: AssistantMessage['content'], usage?: Usage): AssistantMessage {
  const hasCalls = content.some((block) => block.type === 'toolCall');
  return { role: 'assistant', content, stopReason: hasCalls ? 'toolUse' : 'stop', ...(usage ? { usage } : {}) };
}
export const result = (toolCallId: string, toolName: string, isError = false): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId,
  toolName,
  content: isError ? 'error' : 'ok',
  isError,
});
export const counters = (partial: Partial<Counters> = {}): Counters => ({ ...zeroCounters(), ...partial });

export const ev = {
  agentStart: (): Draft => ({ type: 'agentStart' }),
  turnStart: (turnIndex: number): Draft => ({ type: 'turnStart', turnIndex }),
  modelCall: (model = 'm1'): Draft => ({ type: 'beforeModelCall', model, messages: [] }),
  messageStart: (): Draft => ({ type: 'messageStart', message: assistant([]) }),
  delta: (value: string): Draft => ({ type: 'messageUpdate', delta: { type: 'text', index: 0, text: value } }),
  messageEnd: (message: AssistantMessage): Draft => ({ type: 'messageEnd', message }),
  approvalRequested: (toolCallId: string, toolName: string): Draft => ({
    type: 'toolApprovalRequested',
    toolCallId,
    toolName,
    arguments: {},
  }),
  approvalResolved: (toolCallId: string, toolName: string, approved: boolean): Draft => ({
    type: 'toolApprovalResolved',
    toolCallId,
    toolName,
    approved,
  }),
  toolStart: (toolCallId: string, toolName: string): Draft => ({
    type: 'toolExecutionStart',
    toolCallId,
    toolName,
    arguments: {},
  }),
  elicitationRequested: (toolCallId: string, toolName: string): Draft => ({
    type: 'elicitationRequested',
    toolCallId,
    toolName,
    message: 'your name?',
    requestedSchema: { type: 'object' },
  }),
  elicitationResolved: (toolCallId: string, toolName: string): Draft => ({
    type: 'elicitationResolved',
    toolCallId,
    toolName,
    action: 'accept',
  }),
  toolUpdate: (toolCallId: string, toolName: string, partial: unknown = 'progress'): Draft => ({
    type: 'toolExecutionUpdate',
    toolCallId,
    toolName,
    partial,
  }),
  toolEnd: (toolCallId: string, toolName: string, isError = false): Draft => ({
    type: 'toolExecutionEnd',
    toolCallId,
    toolName,
    result: isError ? 'error' : 'ok',
    isError,
  }),
  turnEnd: (reason: TurnEndReason, message: AssistantMessage | null, toolResults: ToolResultMessage[] = []): Draft => ({
    type: 'turnEnd',
    reason,
    assistant: message,
    toolResults,
  }),
  retry: (attempt: number, delayMs: number): Draft => ({
    type: 'retry',
    attempt,
    delayMs,
    error: { kind: 'rateLimit', message: 'slow down', retryable: true },
  }),
  fallback: (from: string, to: string): Draft => ({ type: 'modelFallback', from, to }),
  compacted: (): Draft => ({
    type: 'contextCompacted',
    before: { messages: 9, tokens: 900 },
    after: { messages: 3, tokens: 300 },
  }),
  policyError: (): Draft => ({ type: 'policyError', slot: 'postLoop', message: 'boom' }),
  agentEnd: (status: RunStatus, endReason: EndReason, messages: Message[], counts: Counters): Draft => ({
    type: 'agentEnd',
    status,
    endReason,
    messages,
    counters: counts,
  }),
};

export const violationsOf = (events: AgentEvent[], messages?: Message[]): string[] =>
  checkInvariants(events, messages).violations;

/** Stamps runId, seq (from `firstSeq`, +1 per event) and the open turn's turnIndex. */
export function stamp(runId: string, drafts: readonly Draft[], firstSeq = 0): AgentEvent[] {
  let openTurn: number | undefined;
  return drafts.map((draft, i) => {
    if (draft.type === 'turnStart') openTurn = draft.turnIndex;
    const turnIndex = 'turnIndex' in draft ? draft.turnIndex : openTurn;
    if (draft.type === 'turnEnd') openTurn = undefined;
    const event = { ...draft, runId, seq: firstSeq + i, ...(turnIndex !== undefined ? { turnIndex } : {}) };
    return event as unknown as AgentEvent;
  });
}

export const r1 = (drafts: readonly Draft[]): AgentEvent[] => stamp('r1', drafts);

/** Matches the n-th (0-based) draft of `type`, optionally for one tool call id. */
export function match(type: AgentEventType, toolCallId?: string, nth = 0): (draft: Draft) => boolean {
  let seen = -1;
  return (draft) => {
    if (draft.type !== type || (toolCallId !== undefined && draft.toolCallId !== toolCallId)) return false;
    seen += 1;
    return seen === nth;
  };
}

function indexOf(drafts: readonly Draft[], predicate: (draft: Draft) => boolean): number {
  const index = drafts.findIndex(predicate);
  if (index < 0) throw new Error('test log: no draft matches');
  return index;
}

export function without(drafts: readonly Draft[], predicate: (draft: Draft) => boolean): Draft[] {
  const index = indexOf(drafts, predicate);
  return [...drafts.slice(0, index), ...drafts.slice(index + 1)];
}

export function patched(
  drafts: readonly Draft[],
  predicate: (draft: Draft) => boolean,
  changes: Record<string, unknown>,
): Draft[] {
  const index = indexOf(drafts, predicate);
  return drafts.map((draft, i) => (i === index ? { ...draft, ...changes } : draft));
}

export function insertedAfter(
  drafts: readonly Draft[],
  predicate: (draft: Draft) => boolean,
  ...inserted: Draft[]
): Draft[] {
  const index = indexOf(drafts, predicate);
  return [...drafts.slice(0, index + 1), ...inserted, ...drafts.slice(index + 1)];
}

export function insertedBefore(
  drafts: readonly Draft[],
  predicate: (draft: Draft) => boolean,
  ...inserted: Draft[]
): Draft[] {
  const index = indexOf(drafts, predicate);
  return [...drafts.slice(0, index), ...inserted, ...drafts.slice(index)];
}

/** Moves the draft matching `what` to just before the draft matching `before`. */
export function movedBefore(
  drafts: readonly Draft[],
  what: (draft: Draft) => boolean,
  before: (draft: Draft) => boolean,
): Draft[] {
  const moving = drafts[indexOf(drafts, what)];
  const rest = drafts.filter((draft) => draft !== moving);
  const index = indexOf(rest, before);
  return [...rest.slice(0, index), moving, ...rest.slice(index)];
}

/** Replaces the counters of the (first) agentEnd draft with `counts` merged over its own. */
export function withCounters(drafts: readonly Draft[], counts: Partial<Counters>): Draft[] {
  const index = indexOf(drafts, (draft) => draft.type === 'agentEnd');
  return drafts.map((draft, i) =>
    i === index ? { ...draft, counters: { ...(draft.counters as Counters), ...counts } } : draft,
  );
}

// ---------------------------------------------------------------------------------------------
// Well-formed logs.

/** L1: one text-only turn. seq: 0 agentStart … 7 agentEnd. */
export const textAssistant = assistant([text('hello')], { input: 4, output: 2 });
export const textHistory: Message[] = [user('hi'), textAssistant];
export function textRunDrafts(): Draft[] {
  return [
    ev.agentStart(), // 0
    ev.turnStart(0), // 1
    ev.modelCall(), // 2
    ev.messageStart(), // 3
    ev.delta('hello'), // 4
    ev.messageEnd(textAssistant), // 5
    ev.turnEnd('complete', textAssistant), // 6
    ev.agentEnd(
      'completed',
      'naturalEnd',
      textHistory,
      counters({ turns: 1, modelCalls: 1, tokensIn: 4, tokensOut: 2 }),
    ), // 7
  ];
}

/**
 * A tool turn (two tools, one approved, both reporting progress, finishing in reverse order) then
 * a text turn after one rate-limit retry. seq numbers are noted per line.
 */
export const toolAssistant = assistant([text('checking'), call('call_1', 'read'), call('call_2', 'write')], {
  input: 10,
  output: 5,
});
export const finalAssistant = assistant([text('done')], { input: 20, output: 7 });
export const toolHistory: Message[] = [
  user('go'),
  toolAssistant,
  result('call_1', 'read'),
  result('call_2', 'write'),
  finalAssistant,
];
export const toolRunCounters = counters({
  turns: 2,
  modelCalls: 3,
  retries: 1,
  backoffMs: 2000,
  toolCallsRequested: 2,
  toolCallsExecuted: 2,
  approvalsRequested: 1,
  tokensIn: 30,
  tokensOut: 12,
});
export function toolRunDrafts(): Draft[] {
  return [
    ev.agentStart(), // 0
    ev.turnStart(0), // 1
    ev.modelCall(), // 2
    ev.messageStart(), // 3
    ev.delta('checking'), // 4
    ev.messageEnd(toolAssistant), // 5
    ev.approvalRequested('call_2', 'write'), // 6
    ev.approvalResolved('call_2', 'write', true), // 7
    ev.toolStart('call_1', 'read'), // 8
    ev.toolStart('call_2', 'write'), // 9
    ev.toolUpdate('call_1', 'read'), // 10
    ev.toolUpdate('call_2', 'write'), // 11
    ev.toolEnd('call_2', 'write'), // 12
    ev.toolEnd('call_1', 'read'), // 13
    ev.turnEnd('toolsExecuted', toolAssistant, [result('call_1', 'read'), result('call_2', 'write')]), // 14
    ev.turnStart(1), // 15
    ev.modelCall(), // 16
    ev.retry(1, 2000), // 17
    ev.modelCall(), // 18
    ev.messageStart(), // 19
    ev.delta('done'), // 20
    ev.messageEnd(finalAssistant), // 21
    ev.turnEnd('complete', finalAssistant), // 22
    ev.agentEnd('completed', 'naturalEnd', toolHistory, toolRunCounters), // 23
  ];
}

/**
 * A second run of the same agent (seq restarts at 0): overflow recovery, a model fallback, then a
 * tool turn with an unknown tool, a denied approval and a failing tool; ends at max turns.
 * Counters are cumulative over both runs.
 */
export const secondAssistant = assistant([call('call_1', 'read'), call('call_2', 'write'), call('call_3', 'nope')], {
  input: 5,
  output: 3,
  cacheRead: 2,
  cacheWrite: 1,
});
export const secondResults = [
  result('call_1', 'read', true),
  result('call_2', 'write', true),
  result('call_3', 'nope', true),
];
export const secondHistory: Message[] = [...toolHistory, user('again'), secondAssistant, ...secondResults];
export const secondRunCounters = counters({
  turns: 3,
  modelCalls: 6,
  retries: 1,
  backoffMs: 2000,
  modelFallbacks: 1,
  overflowRecoveries: 1,
  toolCallsRequested: 5,
  toolCallsExecuted: 3,
  toolCallsFailed: 1,
  toolCallsRejected: 1,
  toolCallsInvalid: 1,
  approvalsRequested: 2,
  approvalsDenied: 1,
  tokensIn: 35,
  tokensOut: 15,
  tokensCacheRead: 2,
  tokensCacheWrite: 1,
});
export function secondRunDrafts(): Draft[] {
  return [
    ev.agentStart(), // 0
    ev.turnStart(0), // 1
    ev.modelCall(), // 2
    ev.compacted(), // 3
    ev.modelCall(), // 4
    ev.fallback('m1', 'm2'), // 5
    ev.modelCall('m2'), // 6
    ev.messageStart(), // 7
    ev.messageEnd(secondAssistant), // 8
    ev.toolEnd('call_3', 'nope', true), // 9
    ev.approvalRequested('call_2', 'write'), // 10
    ev.approvalResolved('call_2', 'write', false), // 11
    ev.toolEnd('call_2', 'write', true), // 12
    ev.toolStart('call_1', 'read'), // 13
    ev.toolEnd('call_1', 'read', true), // 14
    ev.turnEnd('toolsExecuted', secondAssistant, secondResults), // 15
    ev.agentEnd('failed', 'maxTurns', secondHistory, secondRunCounters), // 16
  ];
}

export function multiRunLog(second: readonly Draft[] = secondRunDrafts()): AgentEvent[] {
  return [...stamp('r1', toolRunDrafts()), ...stamp('r2', second)];
}
