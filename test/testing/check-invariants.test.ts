import type { EndReason, RunStatus } from 'agentchart';
import { assertInvariants, checkInvariants, eventTypes, InvariantViolationError } from 'agentchart/testing';
import { describe, expect, it } from 'vitest';
import {
  assistant,
  call,
  counters,
  ev,
  finalAssistant,
  insertedBefore,
  match,
  multiRunLog,
  patched,
  r1,
  result,
  secondRunDrafts,
  text,
  textHistory,
  textRunDrafts,
  toolAssistant,
  toolHistory,
  toolRunDrafts,
  user,
  violationsOf,
  withCounters,
  without,
} from './invariant-logs.js';

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
    const counts = counters({
      turns: 1,
      modelCalls: 1,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      approvalsRequested: 1,
      tokensIn: 10,
      tokensOut: 5,
    });
    expect(violationsOf(r1([...drafts, ev.agentEnd(status, endReason, history, counts)]))).toEqual([]);
  });

  it('accepts higher token counters than the messageEnd usage (failed attempts are paid for)', () => {
    const drafts = withCounters(textRunDrafts(), {
      tokensIn: 40,
      tokensOut: 20,
      tokensCacheRead: 3,
      tokensCacheWrite: 1,
    });
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
    const history = [
      user('go'),
      toolAssistant,
      result('call_1', 'read'),
      result('call_2', 'write'),
      result('call_1', 'read'),
      finalAssistant,
    ];
    expect(violationsOf(r1(toolRunDrafts()), history)).toEqual([
      'parity: duplicate result for tool call call_1 (read) of assistant at history message 1 at history message 4 (first at history message 2)',
    ]);
  });

  it('reports orphan results: before any assistant, and with an unknown id', () => {
    const history = [
      user('go'),
      result('call_0', 'read'),
      toolAssistant,
      result('call_1', 'read'),
      result('call_2', 'write'),
      result('call_9', 'x'),
      finalAssistant,
    ];
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

  it('reports a turnEnd whose toolResults miss a call, or answer out of order', () => {
    const missing = patched(toolRunDrafts(), match('turnEnd'), { toolResults: [result('call_1', 'read')] });
    expect(violationsOf(r1(missing))).toEqual([
      'parity: tool call call_2 (write) of the assistant of turnEnd at seq 14 has no result in its toolResults',
    ]);
    const swapped = patched(toolRunDrafts(), match('turnEnd'), {
      toolResults: [result('call_2', 'write'), result('call_1', 'read')],
    });
    expect(violationsOf(r1(swapped))).toEqual([
      'parity: result for tool call call_1 (read) at turnEnd at seq 14 toolResults[1] is out of call order: call 1 of the assistant of turnEnd at seq 14 answered after call 2 (call_2)',
    ]);
  });

  it('reports turnEnd results without an assistant', () => {
    const drafts = [
      ev.agentStart(),
      ev.turnStart(0),
      ev.turnEnd('aborted', null, [result('call_1', 'read')]),
      ev.agentEnd('aborted', 'aborted', [user('go')], counters({ turns: 1 })),
    ];
    expect(violationsOf(r1(drafts))).toEqual([
      'parity: orphan result for call_1 (read) at turnEnd at seq 2 toolResults[0]: the turnEnd has no assistant',
    ]);
  });

  it('reports a turnEnd that commits other tool calls than the messageEnd streamed (P3)', () => {
    const dropped = assistant([text('checking'), call('call_1', 'read')]);
    let drafts = patched(toolRunDrafts(), match('turnEnd'), {
      assistant: dropped,
      toolResults: [result('call_1', 'read')],
    });
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
    expect(violationsOf(r1(drafts))).toEqual([
      'parity: toolExecutionEnd at seq 13 for call_1 names tool grep but the call is read',
    ]);
  });

  it('reports a committed tool call that never started and has no toolExecutionEnd', () => {
    const drafts = without(secondRunDrafts(), match('toolExecutionEnd', 'call_3'));
    expect(violationsOf(multiRunLog(drafts))).toEqual([
      'parity: tool call call_3 (nope) of turn 0 has no toolExecutionEnd',
      'counters: run r2 (agentEnd at seq 15), since the previous agentEnd: toolCallsInvalid + toolCallsRejected is 2, more than the 1 toolExecutionEnd events without a start',
    ]);
  });
});
