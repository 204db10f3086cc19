import type { AgentEvent, Counters, EndReason, Message, RunStatus } from 'agentchart';
import { checkInvariants } from 'agentchart/testing';
import { describe, expect, it } from 'vitest';
import {
  assistant,
  call,
  counters,
  type Draft,
  ev,
  match,
  multiRunLog,
  patched,
  r1,
  result,
  secondRunCounters,
  secondRunDrafts,
  stamp,
  textRunDrafts,
  toolHistory,
  toolRunDrafts,
  user,
  violationsOf,
  withCounters,
  without,
} from './invariant-logs.js';

describe('endReason: tools never end the loop', () => {
  const afterToolTurn = (endReason: EndReason, status: RunStatus): Draft[] => [
    ...toolRunDrafts().slice(0, 15),
    ev.agentEnd(
      status,
      endReason,
      toolHistory.slice(0, 4),
      counters({
        turns: 1,
        modelCalls: 1,
        toolCallsRequested: 2,
        toolCallsExecuted: 2,
        approvalsRequested: 1,
        tokensIn: 10,
        tokensOut: 5,
      }),
    ),
  ];

  it('reports naturalEnd after a turn that ended toolsExecuted (R13)', () => {
    expect(violationsOf(r1(afterToolTurn('naturalEnd', 'completed')))).toEqual([
      'endReason: run r1 (agentEnd at seq 15) ended naturalEnd but its last turn (turnEnd at seq 14) ended toolsExecuted',
      'endReason: run r1 (agentEnd at seq 15) ended naturalEnd but the last assistant message in history has tool calls [call_1 (read), call_2 (write)]',
    ]);
  });

  it('judges the last run by the given history', () => {
    const history = [...toolHistory, user('more'), assistant([call('call_4', 'read')]), result('call_4', 'read')];
    expect(violationsOf(r1(toolRunDrafts()), history)).toEqual([
      'endReason: run r1 (agentEnd at seq 23) ended naturalEnd but the last assistant message in history has tool calls [call_4 (read)]',
    ]);
  });

  it('reports a turn that ended complete with tool calls or without an assistant', () => {
    const withCalls = patched(toolRunDrafts(), match('turnEnd'), { reason: 'complete' });
    expect(violationsOf(r1(withCalls))).toEqual([
      'endReason: turnEnd at seq 14 ended complete but its assistant has tool calls [call_1 (read), call_2 (write)]',
    ]);
    const empty = patched(textRunDrafts(), match('turnEnd'), { assistant: null });
    expect(violationsOf(r1(empty))).toEqual([
      'endReason: turnEnd at seq 6 ended complete without an assistant message',
    ]);
  });

  it('reports naturalEnd without any turn', () => {
    const drafts = [ev.agentStart(), ev.agentEnd('completed', 'naturalEnd', [user('hi')], counters())];
    expect(violationsOf(r1(drafts))).toEqual([
      'endReason: run r1 (agentEnd at seq 1) ended naturalEnd without any turnEnd',
    ]);
  });

  it('reports a status that contradicts the end reason', () => {
    expect(violationsOf(r1(patched(textRunDrafts(), match('agentEnd'), { status: 'failed' })))).toEqual([
      'endReason: run r1 (agentEnd at seq 7) has status failed with endReason naturalEnd; it must be completed',
    ]);
    expect(violationsOf(r1(afterToolTurn('aborted', 'failed')))).toEqual([
      'endReason: run r1 (agentEnd at seq 15) has status failed with endReason aborted; aborted goes with aborted only',
    ]);
    expect(violationsOf(r1(afterToolTurn('maxTurns', 'aborted')))).toEqual([
      'endReason: run r1 (agentEnd at seq 15) has status aborted with endReason maxTurns; aborted goes with aborted only',
    ]);
  });
});

describe('counters', () => {
  const lastRun = 'counters: run r2 (agentEnd at seq 16), since the previous agentEnd';

  it.each<[keyof Counters, number, string]>([
    ['turns', 1, 'turns is 2 but the log has 1 turnEnd events'],
    ['modelCalls', 1, 'modelCalls is 4 but the log has 3 beforeModelCall events'],
    ['retries', 1, 'retries is 1 but the log has 0 retry events'],
    ['backoffMs', 500, 'backoffMs is 500 but the log has 0 ms of retry.delayMs'],
    ['modelFallbacks', 1, 'modelFallbacks is 2 but the log has 1 modelFallback events'],
    ['overflowRecoveries', 1, 'overflowRecoveries is 2 but the log has 1 contextCompacted events'],
    ['toolCallsRequested', -1, 'toolCallsRequested is 2 but the log has 3 tool-call blocks in turnEnd assistants'],
    ['toolCallsExecuted', 1, 'toolCallsExecuted is 2 but the log has 1 toolExecutionStart events'],
    ['toolCallsFailed', 1, 'toolCallsFailed is 2 but the log has 1 toolExecutionEnd events with isError after a start'],
    ['approvalsRequested', 1, 'approvalsRequested is 2 but the log has 1 toolApprovalRequested events'],
    ['approvalsDenied', -1, 'approvalsDenied is 0 but the log has 1 toolApprovalResolved events with approved false'],
    [
      'toolCallsInvalid',
      1,
      'toolCallsInvalid + toolCallsRejected is 3, more than the 2 toolExecutionEnd events without a start',
    ],
    [
      'toolCallsRejected',
      1,
      'toolCallsInvalid + toolCallsRejected is 3, more than the 2 toolExecutionEnd events without a start',
    ],
    ['tokensIn', -1, 'tokensIn is 4, less than the 5 input tokens of messageEnd messages'],
    ['tokensOut', -1, 'tokensOut is 2, less than the 3 output tokens of messageEnd messages'],
    ['tokensCacheRead', -1, 'tokensCacheRead is 1, less than the 2 cache-read tokens of messageEnd messages'],
    ['tokensCacheWrite', -1, 'tokensCacheWrite is 0, less than the 1 cache-write tokens of messageEnd messages'],
  ])('reports %s off by %i in the last run of a multi-run log', (counter, offBy, message) => {
    const drafts = withCounters(secondRunDrafts(), { [counter]: (secondRunCounters[counter] as number) + offBy });
    expect(violationsOf(multiRunLog(drafts))).toEqual([`${lastRun}: ${message}`]);
  });

  it('compares the first run with zero', () => {
    expect(violationsOf(r1(withCounters(toolRunDrafts(), { turns: 3, backoffMs: 1000 })))).toEqual([
      'counters: run r1 (agentEnd at seq 23): turns is 3 but the log has 2 turnEnd events',
      'counters: run r1 (agentEnd at seq 23): backoffMs is 1000 but the log has 2000 ms of retry.delayMs',
    ]);
  });

  it('reports a cumulative counter that goes down between runs', () => {
    const drafts = withCounters(secondRunDrafts(), { tokensCacheWrite: 0, tokensIn: 20 });
    expect(violationsOf(multiRunLog(drafts))).toEqual([
      `${lastRun.replace(', since the previous agentEnd', '')}: tokensIn went down from 30 to 20`,
      `${lastRun}: tokensIn is -10, less than the 5 input tokens of messageEnd messages`,
      `${lastRun}: tokensCacheWrite is 0, less than the 1 cache-write tokens of messageEnd messages`,
    ]);
  });

  it('counts the events of a run without agentEnd into the next agentEnd', () => {
    const firstWithoutEnd = stamp('r1', without(toolRunDrafts(), match('agentEnd')));
    const log = [...firstWithoutEnd, ...stamp('r2', secondRunDrafts())];
    expect(violationsOf(log)).toEqual(['pairing: run r1 has no agentEnd']);
  });
});

describe('malformed input never crashes', () => {
  it('reports schema problems and keeps checking', () => {
    const events = r1(textRunDrafts());
    events[5] = { ...events[5], message: { role: 'assistant', content: 'oops' } } as unknown as AgentEvent;
    expect(violationsOf(events)).toEqual([
      'schema: messageEnd at seq 5 is malformed: message.content: Invalid input: expected array, received string; message.stopReason: Invalid option: expected one of "stop"|"toolUse"|"length"|"error"|"aborted"',
    ]);
  });

  it('reports non-event entries, unknown types and a malformed history', () => {
    const events: unknown[] = [...r1(textRunDrafts())];
    events.splice(3, 0, null, { type: 'mystery', runId: 'r1', seq: 2.5 });
    const history = [user('hi'), { role: 'assistant', content: null } as unknown as Message];
    const violations = violationsOf(events as AgentEvent[], history);
    expect(violations).toContain('schema: entry at index 3 is not an event object');
    expect(violations).toContain('seq: mystery at index 4 has no valid seq (run r1)');
    expect(violations.filter((v) => v.startsWith('schema: mystery at index 4 is malformed: type:'))).toHaveLength(1);
    expect(violations.filter((v) => v.startsWith('schema: history message 1 is malformed: content:'))).toHaveLength(1);
  });

  it('rejects non-array input with a violation', () => {
    expect(checkInvariants(null as unknown as AgentEvent[])).toEqual({
      ok: false,
      violations: ['schema: events is not an array'],
    });
    expect(checkInvariants(r1(textRunDrafts()), {} as unknown as Message[])).toEqual({
      ok: false,
      violations: ['schema: messages is not an array'],
    });
  });
});
