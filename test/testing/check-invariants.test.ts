import type { AgentEvent, Counters, EndReason, Message, RunStatus } from 'agentchart';
import { assertInvariants, checkInvariants, eventTypes, InvariantViolationError } from 'agentchart/testing';
import { describe, expect, it } from 'vitest';
import {
  assistant,
  call,
  counters,
  type Draft,
  ev,
  finalAssistant,
  insertedAfter,
  insertedBefore,
  match,
  movedBefore,
  multiRunLog,
  patched,
  result,
  secondRunCounters,
  secondRunDrafts,
  stamp,
  text,
  textAssistant,
  textHistory,
  textRunDrafts,
  toolAssistant,
  toolHistory,
  toolRunDrafts,
  user,
  withCounters,
  without,
} from './invariant-logs.js';

const r1 = (drafts: Draft[]): AgentEvent[] => stamp('r1', drafts);
const violationsOf = (events: AgentEvent[], messages?: Message[]): string[] => checkInvariants(events, messages).violations;

describe('checkInvariants on well-formed logs', () => {
  it('accepts a text-only turn (L1)', () => {
    expect(checkInvariants(r1(textRunDrafts()))).toEqual({ ok: true, violations: [] });
  });

  it('accepts a tool turn with approval, progress and reverse completion, then a retried text turn', () => {
    expect(checkInvariants(r1(toolRunDrafts()))).toEqual({ ok: true, violations: [] });
    expect(checkInvariants(r1(toolRunDrafts()), toolHistory)).toEqual({ ok: true, violations: [] });
  });

  it('accepts two runs of one agent with cumulative counters and seq restarting per run', () => {
    expect(checkInvariants(multiRunLog())).toEqual({ ok: true, violations: [] });
  });

  it('accepts a post-turn replacement that changes text but keeps the tool calls (P3)', () => {
    const replaced = assistant([text('rewritten'), call('call_1', 'read'), call('call_2', 'write')]);
    const drafts = patched(toolRunDrafts(), match('turnEnd'), { assistant: replaced });
    expect(violationsOf(r1(drafts))).toEqual([]);
  });

  it.each<[EndReason, RunStatus]>([
    ['maxTurns', 'failed'],
    ['aborted', 'aborted'],
    ['policyStop', 'failed'],
    ['retryExhausted', 'failed'],
    ['fatalError', 'failed'],
    ['finalReport', 'completed'],
  ])('accepts a run whose last turn ended toolsExecuted ending with %s', (endReason, status) => {
    const drafts = toolRunDrafts().slice(0, 15);
    const history = toolHistory.slice(0, 4);
    const counts = counters({ turns: 1, modelCalls: 1, toolCallsRequested: 2, toolCallsExecuted: 2, approvalsRequested: 1, tokensIn: 10, tokensOut: 5 });
    expect(violationsOf(r1([...drafts, ev.agentEnd(status, endReason, history, counts)]))).toEqual([]);
  });

  it('accepts higher token counters than the messageEnd usage (failed attempts are paid for)', () => {
    const drafts = withCounters(textRunDrafts(), { tokensIn: 40, tokensOut: 20, tokensCacheRead: 3, tokensCacheWrite: 1 });
    expect(violationsOf(r1(drafts))).toEqual([]);
  });
});

describe('helpers', () => {
  it('eventTypes lists the types in order', () => {
    expect(eventTypes(r1(textRunDrafts()))).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'messageStart',
      'messageUpdate',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
  });

  it('assertInvariants passes quietly on a clean log and throws listing every violation', () => {
    expect(() => assertInvariants(r1(textRunDrafts()), textHistory)).not.toThrow();
    const broken = r1(without(textRunDrafts(), match('agentEnd')));
    let caught: unknown;
    try {
      assertInvariants(broken);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvariantViolationError);
    expect((caught as InvariantViolationError).violations).toEqual(['pairing: run r1 has no agentEnd']);
    expect((caught as Error).message).toBe('1 invariant violation(s):\n  - pairing: run r1 has no agentEnd');
  });
});

describe('parity', () => {
  it('reports a tool call without a result in the committed history', () => {
    const history = [user('go'), toolAssistant, result('call_1', 'read'), finalAssistant];
    expect(violationsOf(r1(toolRunDrafts()), history)).toEqual([
      'parity: tool call call_2 (write) of assistant at history message 1 has no result before the next assistant message (history message 3)',
    ]);
  });

  it('reports a tool call still unanswered when the history ends', () => {
    const history = [user('go'), toolAssistant, result('call_1', 'read')];
    const drafts = patched(toolRunDrafts(), match('agentEnd'), { endReason: 'maxTurns', status: 'failed' });
    expect(violationsOf(r1(drafts), history)).toEqual([
      'parity: tool call call_2 (write) of assistant at history message 1 has no result before history ends',
    ]);
  });

  it('reports results out of call order', () => {
    const history = [user('go'), toolAssistant, result('call_2', 'write'), result('call_1', 'read'), finalAssistant];
    expect(violationsOf(r1(toolRunDrafts()), history)).toEqual([
      'parity: result for tool call call_1 (read) at history message 3 is out of call order: call 1 of assistant at history message 1 answered after call 2 (call_2)',
    ]);
  });

  it('reports a duplicate result', () => {
    const history = [user('go'), toolAssistant, result('call_1', 'read'), result('call_2', 'write'), result('call_1', 'read'), finalAssistant];
    expect(violationsOf(r1(toolRunDrafts()), history)).toEqual([
      'parity: duplicate result for tool call call_1 (read) of assistant at history message 1 at history message 4 (first at history message 2)',
    ]);
  });

  it('reports orphan results: before any assistant, and with an unknown id', () => {
    const history = [user('go'), result('call_0', 'read'), toolAssistant, result('call_1', 'read'), result('call_2', 'write'), result('call_9', 'x'), finalAssistant];
    expect(violationsOf(r1(toolRunDrafts()), history)).toEqual([
      'parity: orphan result for call_0 (read) at history message 1: no assistant message precedes it',
      'parity: orphan result for call_9 (x) at history message 5: not a tool call of assistant at history message 2',
    ]);
  });

  it('reports a result naming another tool than its call', () => {
    const history = [user('go'), toolAssistant, result('call_1', 'grep'), result('call_2', 'write'), finalAssistant];
    expect(violationsOf(r1(toolRunDrafts()), history)).toEqual([
      'parity: result for tool call call_1 at history message 2 names tool grep but the call is read',
    ]);
  });

  it('checks agentEnd.messages when no history is given', () => {
    const history = [user('go'), toolAssistant, result('call_2', 'write'), result('call_1', 'read'), finalAssistant];
    const drafts = patched(toolRunDrafts(), match('agentEnd'), { messages: history });
    expect(violationsOf(r1(drafts))).toEqual([
      'parity: result for tool call call_1 (read) at agentEnd.messages of run r1 (seq 23) message 3 is out of call order: call 1 of assistant at agentEnd.messages of run r1 (seq 23) message 1 answered after call 2 (call_2)',
    ]);
  });

  it("reports a turnEnd whose toolResults miss a call, or answer out of order", () => {
    const missing = patched(toolRunDrafts(), match('turnEnd'), { toolResults: [result('call_1', 'read')] });
    expect(violationsOf(r1(missing))).toEqual([
      'parity: tool call call_2 (write) of the assistant of turnEnd at seq 14 has no result in its toolResults',
    ]);
    const swapped = patched(toolRunDrafts(), match('turnEnd'), { toolResults: [result('call_2', 'write'), result('call_1', 'read')] });
    expect(violationsOf(r1(swapped))).toEqual([
      'parity: result for tool call call_1 (read) at turnEnd at seq 14 toolResults[1] is out of call order: call 1 of the assistant of turnEnd at seq 14 answered after call 2 (call_2)',
    ]);
  });

  it('reports turnEnd results without an assistant', () => {
    const drafts = [ev.agentStart(), ev.turnStart(0), ev.turnEnd('aborted', null, [result('call_1', 'read')]), ev.agentEnd('aborted', 'aborted', [user('go')], counters({ turns: 1 }))];
    expect(violationsOf(r1(drafts))).toEqual([
      'parity: orphan result for call_1 (read) at turnEnd at seq 2 toolResults[0]: the turnEnd has no assistant',
    ]);
  });

  it('reports a turnEnd that commits other tool calls than the messageEnd streamed (P3)', () => {
    const dropped = assistant([text('checking'), call('call_1', 'read')]);
    let drafts = patched(toolRunDrafts(), match('turnEnd'), { assistant: dropped, toolResults: [result('call_1', 'read')] });
    drafts = withCounters(drafts, { toolCallsRequested: 1 });
    expect(violationsOf(r1(drafts))).toEqual([
      'parity: turnEnd at seq 14 commits tool calls [call_1 (read)] but messageEnd at seq 5 streamed [call_1 (read), call_2 (write)]',
    ]);
  });

  it('reports a toolExecutionEnd for an id that is not a tool call of the assistant', () => {
    const drafts = insertedBefore(toolRunDrafts(), match('turnEnd'), ev.toolEnd('call_7', 'read', true));
    expect(violationsOf(r1(drafts))).toEqual([
      "parity: toolExecutionEnd at seq 14 for call_7 (read) is not a tool call of turn 0's assistant (messageEnd at seq 5)",
    ]);
  });

  it('reports a tool event naming another tool than the call', () => {
    const drafts = patched(toolRunDrafts(), match('toolExecutionEnd', 'call_1'), { toolName: 'grep' });
    expect(violationsOf(r1(drafts))).toEqual(['parity: toolExecutionEnd at seq 13 for call_1 names tool grep but the call is read']);
  });

  it('reports a committed tool call that never started and has no toolExecutionEnd', () => {
    const drafts = without(secondRunDrafts(), match('toolExecutionEnd', 'call_3'));
    expect(violationsOf(multiRunLog(drafts))).toEqual([
      'parity: tool call call_3 (nope) of turn 0 has no toolExecutionEnd',
      'counters: run r2 (agentEnd at seq 15), since the previous agentEnd: toolCallsInvalid + toolCallsRejected is 2, more than the 1 toolExecutionEnd events without a start',
    ]);
  });
});

describe('pairing', () => {
  it('reports a messageStart without messageEnd', () => {
    expect(violationsOf(r1(without(textRunDrafts(), match('messageEnd'))))).toEqual(['pairing: messageStart at seq 3 has no messageEnd']);
  });

  it('reports a second messageStart in one turn', () => {
    let drafts = insertedAfter(textRunDrafts(), match('messageEnd'), ev.modelCall(), ev.messageStart(), ev.messageEnd(textAssistant));
    drafts = withCounters(drafts, { modelCalls: 2, tokensIn: 8, tokensOut: 4 });
    expect(violationsOf(r1(drafts))).toEqual(['pairing: second messageStart at seq 7 in turn 0 (first at seq 3)']);
  });

  it('reports nested messages, and updates or ends with no open message', () => {
    const nested = insertedAfter(textRunDrafts(), match('messageStart'), ev.messageStart());
    expect(violationsOf(r1(nested))).toEqual([
      'pairing: messageStart at seq 4 while the message from seq 3 is still open',
      'counters: run r1 (agentEnd at seq 8): modelCalls is 1, less than the 2 messageStart events',
    ]);
    const update = insertedAfter(textRunDrafts(), match('messageEnd'), ev.delta('late'));
    expect(violationsOf(r1(update))).toEqual(['pairing: messageUpdate at seq 6 without an open message']);
    const end = insertedAfter(textRunDrafts(), match('messageEnd'), ev.messageEnd(textAssistant));
    expect(violationsOf(r1(withCounters(end, { tokensIn: 8, tokensOut: 4 })))).toEqual(['pairing: messageEnd at seq 6 without an open message']);
  });

  it('reports a messageStart with no beforeModelCall before it in its turn', () => {
    const drafts = withCounters(without(textRunDrafts(), match('beforeModelCall')), { modelCalls: 0 });
    expect(violationsOf(r1(drafts))).toEqual([
      'pairing: messageStart at seq 2 has no beforeModelCall before it in turn 0',
      'counters: run r1 (agentEnd at seq 6): modelCalls is 0, less than the 1 messageStart events',
    ]);
  });

  it('reports turnStart twice without turnEnd between', () => {
    const drafts = insertedAfter(textRunDrafts(), match('turnStart'), ev.turnStart(1));
    expect(violationsOf(r1(drafts))).toEqual(['pairing: turnStart at seq 2 while turn 0 from seq 1 is still open']);
  });

  it('reports a turnEnd without an open turn', () => {
    const drafts = insertedAfter(textRunDrafts(), match('turnEnd'), ev.turnEnd('complete', textAssistant));
    expect(violationsOf(r1(withCounters(drafts, { turns: 2 })))).toEqual(['pairing: turnEnd at seq 7 without an open turn']);
  });

  it('reports a turn without turnEnd', () => {
    expect(violationsOf(r1(without(textRunDrafts(), match('turnEnd'))))).toEqual([
      'pairing: turn 0 started at seq 1 has no turnEnd',
      'endReason: run r1 (agentEnd at seq 6) ended naturalEnd without any turnEnd',
      'counters: run r1 (agentEnd at seq 6): turns is 1 but the log has 0 turnEnd events',
    ]);
  });

  it('reports turn-scoped events outside a turn', () => {
    const drafts = insertedAfter(textRunDrafts(), match('turnEnd'), ev.toolEnd('call_1', 'read'));
    expect(violationsOf(r1(drafts))).toEqual(['pairing: toolExecutionEnd at seq 7 outside a turn']);
  });

  it('reports agentEnd not last, missing, or twice', () => {
    const after = insertedAfter(textRunDrafts(), match('agentEnd'), ev.policyError());
    expect(violationsOf(r1(after))).toEqual([
      'pairing: agentEnd at seq 7 is not the last event of run r1 (the run ends with policyError at seq 8)',
    ]);
    expect(violationsOf(r1(without(textRunDrafts(), match('agentEnd'))))).toEqual(['pairing: run r1 has no agentEnd']);
    const twice = [...textRunDrafts(), textRunDrafts()[7]];
    expect(violationsOf(r1(twice))).toEqual(['pairing: run r1 has 2 agentEnd events (seq 7, seq 8)']);
  });

  it('reports a missing or misplaced agentStart, and an empty log', () => {
    expect(violationsOf(r1(without(textRunDrafts(), match('agentStart'))))).toEqual([
      'pairing: run r1 does not start with agentStart (first event is turnStart at seq 0)',
    ]);
    const late = movedBefore(textRunDrafts(), match('agentStart'), match('beforeModelCall'));
    expect(violationsOf(r1(late))).toEqual([
      'pairing: run r1 does not start with agentStart (first event is turnStart at seq 0)',
      'pairing: agentStart at seq 1 is not the first event of run r1',
    ]);
    expect(checkInvariants([])).toEqual({ ok: false, violations: ['pairing: the log is empty (no agentStart)'] });
  });

  it('reports tool events before the assistant messageEnd', () => {
    const drafts = movedBefore(toolRunDrafts(), match('toolApprovalRequested'), match('messageEnd'));
    expect(violationsOf(r1(drafts))).toEqual(["pairing: toolApprovalRequested at seq 5 for call_2 precedes turn 0's assistant messageEnd"]);
  });

  it('reports a repeated toolExecutionStart and a duplicate toolExecutionEnd', () => {
    const started = insertedAfter(toolRunDrafts(), match('toolExecutionStart', 'call_2'), ev.toolStart('call_1', 'read'));
    expect(violationsOf(r1(withCounters(started, { toolCallsExecuted: 3 })))).toEqual([
      'pairing: toolExecutionStart for call_1 at seq 10 repeats the start at seq 8',
    ]);
    const ended = insertedBefore(toolRunDrafts(), match('turnEnd'), ev.toolEnd('call_2', 'write'));
    expect(violationsOf(r1(ended))).toEqual(['pairing: toolExecutionEnd for call_2 at seq 14 duplicates the end at seq 12']);
  });

  it('reports a started call without toolExecutionEnd', () => {
    expect(violationsOf(r1(without(toolRunDrafts(), match('toolExecutionEnd', 'call_1'))))).toEqual([
      'pairing: toolExecutionStart for call_1 at seq 8 has no toolExecutionEnd',
    ]);
  });

  it('reports a toolExecutionStart after its toolExecutionEnd', () => {
    let drafts = movedBefore(toolRunDrafts(), match('toolExecutionEnd', 'call_1'), match('toolExecutionStart', 'call_1'));
    drafts = without(drafts, match('toolExecutionUpdate', 'call_1'));
    expect(violationsOf(r1(drafts))).toEqual(['pairing: toolExecutionStart for call_1 at seq 9 comes after its toolExecutionEnd at seq 8']);
  });

  it('reports approval resolved without request, never resolved, and a start after denial', () => {
    const unrequested = withCounters(without(toolRunDrafts(), match('toolApprovalRequested')), { approvalsRequested: 0 });
    expect(violationsOf(r1(unrequested))).toEqual([
      'pairing: toolApprovalResolved for call_2 at seq 6 has no toolApprovalRequested before it',
    ]);
    expect(violationsOf(r1(without(toolRunDrafts(), match('toolApprovalResolved'))))).toEqual([
      'pairing: toolExecutionStart for call_2 at seq 8 comes before its approval (requested at seq 6) was resolved',
      'pairing: toolApprovalRequested for call_2 at seq 6 is never resolved',
    ]);
    const denied = withCounters(patched(toolRunDrafts(), match('toolApprovalResolved'), { approved: false }), { approvalsDenied: 1 });
    expect(violationsOf(r1(denied))).toEqual(['pairing: toolExecutionStart for call_2 at seq 9 follows a denied approval at seq 7']);
  });

  it('reports a second approval request while one is open', () => {
    const drafts = insertedAfter(toolRunDrafts(), match('toolApprovalRequested'), ev.approvalRequested('call_2', 'write'));
    expect(violationsOf(r1(withCounters(drafts, { approvalsRequested: 2 })))).toEqual([
      'pairing: toolApprovalRequested for call_2 at seq 7 while the request at seq 6 is unresolved',
    ]);
  });

  it('reports interleaved runs', () => {
    const [first, second] = [stamp('r1', toolRunDrafts()), stamp('r2', secondRunDrafts(), 100)];
    const log = [...first.slice(0, 20), ...second, ...first.slice(20)];
    expect(violationsOf(log)).toEqual(['pairing: run r1 resumes at seq 20 after run r2 began']);
  });
});

describe('attribution', () => {
  it('reports an update before its call started', () => {
    const drafts = movedBefore(toolRunDrafts(), match('toolExecutionUpdate', 'call_1'), match('toolExecutionStart', 'call_1'));
    expect(violationsOf(r1(drafts))).toEqual(['attribution: toolExecutionUpdate at seq 8 for call_1 (read) has no started call in turn 0']);
  });

  it('reports an update after its call ended', () => {
    const drafts = movedBefore(toolRunDrafts(), match('toolExecutionUpdate', 'call_2'), match('toolExecutionEnd', 'call_1'));
    expect(violationsOf(r1(drafts))).toEqual([
      'attribution: toolExecutionUpdate at seq 12 for call_2 (write) comes after its toolExecutionEnd at seq 11',
    ]);
  });

  it('reports an update with the wrong tool name, an unknown id, or no id', () => {
    const renamed = patched(toolRunDrafts(), match('toolExecutionUpdate', 'call_1'), { toolName: 'write' });
    expect(violationsOf(r1(renamed))).toEqual([
      'attribution: toolExecutionUpdate at seq 10 for call_1 names tool write but the call started as read at seq 8',
    ]);
    const unknown = patched(toolRunDrafts(), match('toolExecutionUpdate', 'call_1'), { toolCallId: 'call_5' });
    expect(violationsOf(r1(unknown))).toEqual(['attribution: toolExecutionUpdate at seq 10 for call_5 (read) has no started call in turn 0']);
    const anonymous = patched(toolRunDrafts(), match('toolExecutionUpdate', 'call_1'), { toolCallId: '' });
    expect(violationsOf(r1(anonymous))).toEqual(['attribution: toolExecutionUpdate at seq 10 has no toolCallId or toolName']);
  });

  it('scopes call ids to their turn: a reused id in a later turn needs its own start', () => {
    const drafts = insertedAfter(toolRunDrafts(), match('messageEnd', undefined, 1), ev.toolUpdate('call_1', 'read'));
    expect(violationsOf(r1(drafts))).toEqual(['attribution: toolExecutionUpdate at seq 22 for call_1 (read) has no started call in turn 1']);
  });
});
