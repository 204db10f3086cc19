import type { AgentEvent } from 'agentchart';
import { checkInvariants } from 'agentchart/testing';
import { describe, expect, it } from 'vitest';
import {
  ev,
  insertedAfter,
  insertedBefore,
  match,
  movedBefore,
  patched,
  r1,
  secondRunDrafts,
  stamp,
  textAssistant,
  textRunDrafts,
  toolRunDrafts,
  violationsOf,
  withCounters,
  without,
} from './invariant-logs.js';

describe('pairing', () => {
  it('reports a messageStart without messageEnd', () => {
    expect(violationsOf(r1(without(textRunDrafts(), match('messageEnd'))))).toEqual([
      'pairing: messageStart at seq 3 has no messageEnd',
    ]);
  });

  it('reports a second messageStart in one turn', () => {
    let drafts = insertedAfter(
      textRunDrafts(),
      match('messageEnd'),
      ev.modelCall(),
      ev.messageStart(),
      ev.messageEnd(textAssistant),
    );
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
    expect(violationsOf(r1(withCounters(end, { tokensIn: 8, tokensOut: 4 })))).toEqual([
      'pairing: messageEnd at seq 6 without an open message',
    ]);
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
    expect(violationsOf(r1(withCounters(drafts, { turns: 2 })))).toEqual([
      'pairing: turnEnd at seq 7 without an open turn',
    ]);
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

  it('accepts toolsChanged between turns and reports it inside a turn', () => {
    const change = { type: 'toolsChanged', added: ['mcp__new'], removed: [], updated: [] } as const;
    expect(violationsOf(r1(insertedBefore(textRunDrafts(), match('turnStart'), change)))).toEqual([]);
    expect(violationsOf(r1(insertedAfter(textRunDrafts(), match('turnStart'), change)))).toEqual([
      'pairing: toolsChanged at seq 2 inside turn 0: tool lists change between turns only',
    ]);
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
    expect(violationsOf(r1(drafts))).toEqual([
      "pairing: toolApprovalRequested at seq 5 for call_2 precedes turn 0's assistant messageEnd",
    ]);
  });

  it('reports a repeated toolExecutionStart and a duplicate toolExecutionEnd', () => {
    const started = insertedAfter(
      toolRunDrafts(),
      match('toolExecutionStart', 'call_2'),
      ev.toolStart('call_1', 'read'),
    );
    expect(violationsOf(r1(withCounters(started, { toolCallsExecuted: 3 })))).toEqual([
      'pairing: toolExecutionStart for call_1 at seq 10 repeats the start at seq 8',
    ]);
    const ended = insertedBefore(toolRunDrafts(), match('turnEnd'), ev.toolEnd('call_2', 'write'));
    expect(violationsOf(r1(ended))).toEqual([
      'pairing: toolExecutionEnd for call_2 at seq 14 duplicates the end at seq 12',
    ]);
  });

  it('reports a started call without toolExecutionEnd', () => {
    expect(violationsOf(r1(without(toolRunDrafts(), match('toolExecutionEnd', 'call_1'))))).toEqual([
      'pairing: toolExecutionStart for call_1 at seq 8 has no toolExecutionEnd',
    ]);
  });

  it('reports a toolExecutionStart after its toolExecutionEnd', () => {
    let drafts = movedBefore(
      toolRunDrafts(),
      match('toolExecutionEnd', 'call_1'),
      match('toolExecutionStart', 'call_1'),
    );
    drafts = without(drafts, match('toolExecutionUpdate', 'call_1'));
    expect(violationsOf(r1(drafts))).toEqual([
      'pairing: toolExecutionStart for call_1 at seq 9 comes after its toolExecutionEnd at seq 8',
    ]);
  });

  it('reports approval resolved without request, never resolved, and a start after denial', () => {
    const unrequested = withCounters(without(toolRunDrafts(), match('toolApprovalRequested')), {
      approvalsRequested: 0,
    });
    expect(violationsOf(r1(unrequested))).toEqual([
      'pairing: toolApprovalResolved for call_2 at seq 6 has no toolApprovalRequested before it',
    ]);
    expect(violationsOf(r1(without(toolRunDrafts(), match('toolApprovalResolved'))))).toEqual([
      'pairing: toolExecutionStart for call_2 at seq 8 comes before its approval (requested at seq 6) was resolved',
      'pairing: toolApprovalRequested for call_2 at seq 6 is never resolved',
    ]);
    const denied = withCounters(patched(toolRunDrafts(), match('toolApprovalResolved'), { approved: false }), {
      approvalsDenied: 1,
    });
    expect(violationsOf(r1(denied))).toEqual([
      'pairing: toolExecutionStart for call_2 at seq 9 follows a denied approval at seq 7',
    ]);
  });

  it('reports a second approval request while one is open', () => {
    const drafts = insertedAfter(
      toolRunDrafts(),
      match('toolApprovalRequested'),
      ev.approvalRequested('call_2', 'write'),
    );
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
    const drafts = movedBefore(
      toolRunDrafts(),
      match('toolExecutionUpdate', 'call_1'),
      match('toolExecutionStart', 'call_1'),
    );
    expect(violationsOf(r1(drafts))).toEqual([
      'attribution: toolExecutionUpdate at seq 8 for call_1 (read) has no started call in turn 0',
    ]);
  });

  it('reports an update after its call ended', () => {
    const drafts = movedBefore(
      toolRunDrafts(),
      match('toolExecutionUpdate', 'call_2'),
      match('toolExecutionEnd', 'call_1'),
    );
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
    expect(violationsOf(r1(unknown))).toEqual([
      'attribution: toolExecutionUpdate at seq 10 for call_5 (read) has no started call in turn 0',
    ]);
    const anonymous = patched(toolRunDrafts(), match('toolExecutionUpdate', 'call_1'), { toolCallId: '' });
    expect(violationsOf(r1(anonymous))).toEqual([
      'attribution: toolExecutionUpdate at seq 10 has no toolCallId or toolName',
    ]);
  });

  it("an elicitation pairs between its call's start and end, one open at a time", () => {
    const asking = () =>
      insertedAfter(
        toolRunDrafts(),
        match('toolExecutionUpdate', 'call_1'),
        ev.elicitationRequested('call_1', 'read'),
        ev.elicitationResolved('call_1', 'read'),
      );
    expect(violationsOf(r1(asking()))).toEqual([]);
    const early = movedBefore(asking(), match('elicitationRequested'), match('toolExecutionStart', 'call_1'));
    expect(violationsOf(r1(early))).toEqual([
      'attribution: elicitationRequested at seq 8 for call_1 (read) has no started call in turn 0',
    ]);
    const late = movedBefore(asking(), match('toolExecutionEnd', 'call_1'), match('elicitationResolved'));
    expect(violationsOf(r1(late))).toEqual([
      'pairing: elicitationRequested for call_1 at seq 11 is unresolved at its call end seq 12',
      'attribution: elicitationResolved at seq 13 for call_1 (read) comes after its toolExecutionEnd at seq 12',
    ]);
    const unasked = without(asking(), match('elicitationRequested'));
    expect(violationsOf(r1(unasked))).toEqual([
      'pairing: elicitationResolved for call_1 at seq 11 has no elicitationRequested before it',
    ]);
    const twice = insertedAfter(asking(), match('elicitationRequested'), ev.elicitationRequested('call_1', 'read'));
    expect(violationsOf(r1(twice))).toEqual([
      'pairing: elicitationRequested for call_1 at seq 12 while the one at seq 11 is unresolved',
    ]);
  });

  it('scopes call ids to their turn: a reused id in a later turn needs its own start', () => {
    const drafts = insertedAfter(toolRunDrafts(), match('messageEnd', undefined, 1), ev.toolUpdate('call_1', 'read'));
    expect(violationsOf(r1(drafts))).toEqual([
      'attribution: toolExecutionUpdate at seq 22 for call_1 (read) has no started call in turn 1',
    ]);
  });
});

describe('seq and turnIndex', () => {
  it('reports a seq that does not increase', () => {
    const events = r1(textRunDrafts());
    events[5] = { ...events[5], seq: 4 };
    expect(violationsOf(events)).toEqual([
      'seq: messageEnd at index 5 has seq 4, not greater than seq 4 before it (run r1)',
    ]);
  });

  it('reports an event without a valid seq or runId', () => {
    const events = r1(textRunDrafts());
    const { seq: _dropped, ...noSeq } = events[4];
    events[4] = noSeq as AgentEvent;
    expect(violationsOf(events)).toEqual(['seq: messageUpdate at index 4 has no valid seq (run r1)']);

    const anonymous = r1(textRunDrafts());
    anonymous[4] = { ...anonymous[4], runId: '' };
    expect(violationsOf(anonymous)).toContain('seq: messageUpdate at index 4 has no runId');
  });

  it("reports a turn-scoped event without turnIndex, or with another turn's index", () => {
    const missing = r1(textRunDrafts());
    const { turnIndex: _dropped, ...noTurn } = missing[4];
    missing[4] = noTurn as AgentEvent;
    expect(violationsOf(missing)).toEqual(['seq: messageUpdate at seq 4 has no turnIndex while turn 0 is open']);

    const wrong = r1(patched(textRunDrafts(), match('messageUpdate'), { turnIndex: 3 }));
    expect(violationsOf(wrong)).toEqual(['seq: messageUpdate at seq 4 has turnIndex 3 but the open turn is 0']);
  });

  it('requires the open turn index on master events inside a turn (retry)', () => {
    const events = r1(toolRunDrafts());
    const { turnIndex: _dropped, ...retry } = events[17];
    events[17] = retry as AgentEvent;
    expect(violationsOf(events)).toEqual(['seq: retry at seq 17 has no turnIndex while turn 1 is open']);
  });

  it('reports turn indices that do not increase within a run', () => {
    const drafts = patched(toolRunDrafts(), match('turnStart', undefined, 1), { turnIndex: 0 });
    expect(violationsOf(r1(drafts))).toEqual([
      'seq: turnStart at seq 15 has turnIndex 0, not greater than the previous turn 0 (run r1)',
    ]);
  });

  it('reports a turnStart without turnIndex', () => {
    const events = r1(textRunDrafts());
    const { turnIndex: _dropped, ...turnStart } = events[1];
    events[1] = turnStart as AgentEvent;
    expect(violationsOf(events)).toEqual(['seq: turnStart at seq 1 has no turnIndex']);
  });
});
