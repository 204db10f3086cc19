import { describe, expect, it } from 'vitest';
import {
  resultsInCallOrder,
  settle,
  settledByPosition,
  settledFrom,
  settleUnfinished,
  syntheticInCallOrder,
  unfinishedText,
} from '../../machines/tool-results.js';
import type { AssistantMessage, ToolResultMessage } from '../../src/domain/messages.js';

/** The turn's settled results: a list of cells, newest first, read by position (the first recorded wins). */

const call = (id: string) => ({ type: 'toolCall' as const, id, name: 'read', arguments: {} });
const REPLY: AssistantMessage = {
  role: 'assistant',
  content: [{ type: 'text', text: 'reading' }, call('c0'), call('c1'), call('c2')],
  stopReason: 'toolUse',
};
const result = (id: string, content: string, isError = false): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId: id,
  toolName: 'read',
  content,
  isError,
});

describe('tool results', () => {
  it('every unfinished reason has its own text, the one the model reads', () => {
    expect(unfinishedText({ kind: 'aborted' })).toBe('aborted: the run was cancelled before this tool call finished');
    expect(unfinishedText({ kind: 'stopped', reason: 'policy' })).toBe('stopped before dispatch: policy');
    expect(unfinishedText({ kind: 'invalidPartition', reason: 'bad' })).toBe('invalid partition: bad');
    expect(unfinishedText({ kind: 'steering' })).toBe(
      'cancelled: steering (the user sent a new message; this call was interrupted)',
    );
    expect(unfinishedText({ kind: 'steeringSkipped' })).toBe(
      'skipped: steering (the user sent a new message before this call started)',
    );
    expect(unfinishedText({ kind: 'replyFailed' })).toBe('not run: the model reply failed before this call could run');
  });

  it('the first result recorded for a position wins; call order comes from positions, not from the order of settling', () => {
    const first = result('c1', 'first');
    const list = settle(
      settle(settle(null, 1, first, false, true), 1, result('c1', 'second')),
      0,
      result('c0', 'zero'),
    );
    expect(settledByPosition(list).get(1)?.result).toBe(first);
    expect(resultsInCallOrder(REPLY, list).map((r) => r.content)).toEqual(['zero', 'first']);
    expect(syntheticInCallOrder(REPLY, list).map((r) => r.content)).toEqual(['zero', 'first']);
  });

  it('a resumed turn: published results are marked published, the replay rule’s are not; none counts as started', () => {
    const published = new Map([
      [2, result('c2', 'published two')],
      [0, result('c0', 'published zero')],
    ]);
    const notRerun = new Map([[1, result('c1', 'interrupted', true)]]);
    const byPosition = settledByPosition(settledFrom(published, notRerun));
    expect([...byPosition.entries()].map(([position, cell]) => [position, cell.published, cell.started])).toEqual(
      expect.arrayContaining([
        [0, true, false],
        [1, false, false],
        [2, true, false],
      ]),
    );
    expect(byPosition.size).toBe(3);
    expect(syntheticInCallOrder(REPLY, settledFrom(published, notRerun)).map((r) => r.content)).toEqual([
      'interrupted',
    ]);
    expect(settledFrom(new Map(), new Map())).toBeNull();
  });

  it('unfinished calls get one synthetic error each; decided ones keep their result; no reply, nothing to settle', () => {
    const done = settle(null, 1, result('c1', 'ok'), false, true);
    const next = settleUnfinished({ message: REPLY }, done, { kind: 'aborted' });
    expect(resultsInCallOrder(REPLY, next)).toEqual([
      result('c0', unfinishedText({ kind: 'aborted' }), true),
      result('c1', 'ok'),
      result('c2', unfinishedText({ kind: 'aborted' }), true),
    ]);
    expect(settleUnfinished(null, done, { kind: 'aborted' })).toBe(done);
    const all = settleUnfinished({ message: REPLY }, next, { kind: 'steering' });
    expect(resultsInCallOrder(REPLY, all)).toEqual(resultsInCallOrder(REPLY, next));
  });

  it('without a reply or without results there is nothing in call order', () => {
    const list = settle(null, 0, result('c0', 'zero'));
    expect(resultsInCallOrder(null, list)).toEqual([]);
    expect(syntheticInCallOrder(null, list)).toEqual([]);
    expect(resultsInCallOrder(REPLY, null)).toEqual([]);
    expect(syntheticInCallOrder(REPLY, null)).toEqual([]);
  });
});
