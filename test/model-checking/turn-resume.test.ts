import { describe, expect, it } from 'vitest';
import { initialTransition } from 'xstate';
import { resultsInCallOrder, unfinishedText } from '../../machines/tool-results.js';
import { resumedEnding } from '../../machines/turn.context.js';
import type { ModelReply, TurnInput } from '../../machines/turn.types.js';
import { REPLIES } from './turn-fixtures.js';
import { NO_FEATURES, provideTurn, resumedInput } from './turn-model.js';

/** A turn resumed after a restart with its reply published: it ends as that reply did, nothing is run again. */

const withStop = (reply: ModelReply, stopReason: 'aborted' | 'error'): ModelReply => ({
  ...reply,
  error: null,
  message: { ...reply.message, stopReason },
});

function resumedWith(reply: ModelReply, committed = false) {
  const base = resumedInput(NO_FEATURES);
  const input: TurnInput = {
    ...base,
    resume: { ...(base.resume as NonNullable<TurnInput['resume']>), reply, results: new Map(), committed },
  };
  const [snapshot] = initialTransition(provideTurn(), input);
  return snapshot;
}

describe('turn: resumed with its reply published', () => {
  it('the ending is read from the reply: aborted, failed, tools executed or complete', () => {
    expect(resumedEnding(null)).toEqual({ kind: 'success', reason: 'complete' });
    expect(resumedEnding(REPLIES.text)).toEqual({ kind: 'success', reason: 'complete' });
    expect(resumedEnding(REPLIES.oneCall)).toEqual({ kind: 'success', reason: 'toolsExecuted' });
    expect(resumedEnding(REPLIES.aborted)).toEqual({ kind: 'aborted', reason: 'aborted' });
    expect(resumedEnding(withStop(REPLIES.text, 'aborted'))).toEqual({ kind: 'aborted', reason: 'aborted' });
    expect(resumedEnding(REPLIES.authFailed)).toEqual({ kind: 'failure', detail: 'fatal', reason: 'error' });
    expect(resumedEnding(withStop(REPLIES.text, 'error'))).toEqual({
      kind: 'failure',
      detail: 'fatal',
      reason: 'error',
    });
  });

  it('an aborted reply: its calls get the aborted result; a failed one: the reply-failed result', () => {
    const aborted = resumedWith(REPLIES.aborted);
    expect(aborted.context.ending).toEqual({ kind: 'aborted', reason: 'aborted' });
    expect(resultsInCallOrder(REPLIES.aborted.message, aborted.context.settled)).toEqual([
      expect.objectContaining({ toolCallId: 'call_1', content: unfinishedText({ kind: 'aborted' }), isError: true }),
    ]);
    const failed = resumedWith(REPLIES.rejectedAfterCall);
    expect(failed.context.ending).toEqual({ kind: 'failure', detail: 'fatal', reason: 'error' });
    expect(resultsInCallOrder(REPLIES.rejectedAfterCall.message, failed.context.settled)).toEqual([
      expect.objectContaining({ content: unfinishedText({ kind: 'replyFailed' }), isError: true }),
    ]);
  });

  it('a committed turn only lacks its turnEnd: it ends at once, as its reply did', () => {
    const committed = resumedWith(REPLIES.text, true);
    expect(committed.status).toBe('done');
    expect(committed.output).toMatchObject({ kind: 'success', turnEndReason: 'complete', inputCommitted: true });
  });
});
