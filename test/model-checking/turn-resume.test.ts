import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, initialTransition, transition } from 'xstate';
import { errorResult, resultsInCallOrder, settle, unfinishedText } from '../../machines/tool-results.js';
import { resumedEnding, startedCallIds, type TurnContext } from '../../machines/turn.context.js';
import type { ModelReply, Settled, TurnInput } from '../../machines/turn.types.js';
import { REPLIES } from './turn-fixtures.js';
import { activeInvocations, doneEvent } from './harness/explore.js';
import { NO_FEATURES, provideTurn, resumedInput, turnInput } from './turn-model.js';

/** A turn resumed after a restart with its reply published: it ends as that reply did, nothing is run again. */

const withStop = (reply: ModelReply, stopReason: 'aborted' | 'error'): ModelReply => ({
  ...reply,
  error: null,
  message: { ...reply.message, stopReason },
});

function resumeTurn(reply: ModelReply, committed = false) {
  const base = resumedInput(NO_FEATURES);
  const input: TurnInput = {
    ...base,
    resume: { ...(base.resume as NonNullable<TurnInput['resume']>), reply, results: new Map(), committed },
  };
  const [snapshot, actions] = initialTransition(provideTurn(), input);
  return { snapshot, effects: actions.map((action) => action.type) };
}
const resumedWith = (reply: ModelReply, committed = false) => resumeTurn(reply, committed).snapshot;

describe('turn: resumed with its reply published', () => {
  it('the ending is read from the reply: aborted, failed, tools executed or complete', () => {
    expect(resumedEnding(null)).toEqual({ kind: 'success', turnEndReason: 'complete', error: null });
    expect(resumedEnding(REPLIES.text)).toEqual({ kind: 'success', turnEndReason: 'complete', error: null });
    expect(resumedEnding(REPLIES.oneCall)).toEqual({ kind: 'success', turnEndReason: 'toolsExecuted', error: null });
    expect(resumedEnding(REPLIES.aborted)).toEqual({ kind: 'aborted', turnEndReason: 'aborted', error: null });
    const abortedWithError = {
      ...REPLIES.aborted,
      message: { ...REPLIES.aborted.message, stopReason: 'error' as const },
    };
    expect(resumedEnding(abortedWithError)).toEqual({ kind: 'aborted', turnEndReason: 'aborted', error: null });
    expect(resumedEnding(withStop(REPLIES.text, 'aborted'))).toEqual({
      kind: 'aborted',
      turnEndReason: 'aborted',
      error: null,
    });
    expect(resumedEnding(REPLIES.authFailed)).toEqual({
      kind: 'failure',
      detail: 'fatal',
      turnEndReason: 'error',
      error: REPLIES.authFailed.error,
    });
    expect(resumedEnding(withStop(REPLIES.text, 'error'))).toEqual({
      kind: 'failure',
      detail: 'fatal',
      turnEndReason: 'error',
      error: null,
    });
  });

  it('an aborted reply: its calls get the aborted result; a failed one: the reply-failed result', () => {
    const aborted = resumedWith(REPLIES.aborted);
    expect(aborted.context.ending).toEqual({ kind: 'aborted', turnEndReason: 'aborted', error: null });
    expect(resultsInCallOrder(REPLIES.aborted.message, aborted.context.settled)).toEqual([
      expect.objectContaining({ toolCallId: 'call_1', content: unfinishedText({ kind: 'aborted' }), isError: true }),
    ]);
    const failed = resumedWith(REPLIES.rejectedAfterCall);
    expect(failed.context.ending).toEqual({
      kind: 'failure',
      detail: 'fatal',
      turnEndReason: 'error',
      error: REPLIES.rejectedAfterCall.error,
    });
    expect(resultsInCallOrder(REPLIES.rejectedAfterCall.message, failed.context.settled)).toEqual([
      expect.objectContaining({ content: unfinishedText({ kind: 'replyFailed' }), isError: true }),
    ]);
  });

  it('a committed turn only lacks its turnEnd: it ends at once, as its reply did, committing nothing again', () => {
    const { snapshot: committed, effects } = resumeTurn(REPLIES.text, true);
    expect(committed.status).toBe('done');
    expect(committed.output).toMatchObject({ kind: 'success', turnEndReason: 'complete' });
    expect(effects).not.toContain('commitTurn');
    const { snapshot: uncommitted, effects: uncommittedEffects } = resumeTurn(REPLIES.text);
    expect(uncommitted.context.ending).toEqual({ kind: 'success', turnEndReason: 'complete', error: null });
    expect(uncommittedEffects).toContain('commitTurn');
  });

  it('a reply whose tools have not all run: they continue; a text reply goes straight to its response', () => {
    const tools = resumedWith(REPLIES.oneCall);
    expect(tools.matches('TOOL_EXECUTION')).toBe(true);
    expect(tools.context.ending).toBeNull();
    expect(resumedWith(REPLIES.text).matches('TOOL_EXECUTION')).toBe(false);
  });
});

describe('turn: the started calls and the calls prepared again', () => {
  const context = (settled: Settled | null, resumedStarted: string[] | null) =>
    ({
      settled,
      input: { resume: resumedStarted ? { startedCallIds: resumedStarted } : null },
    }) as unknown as TurnContext;
  const started = (position: number, id: string, rest: Settled | null): Settled =>
    settle(
      rest,
      position,
      { role: 'toolResult', toolCallId: id, toolName: 'read', content: 'ok', isError: false },
      false,
      true,
    );

  it('started calls in call order, synthetic results left out, those started before a restart first and once', () => {
    const live = started(1, 'b', settle(started(0, 'a', null), 2, errorResult({ id: 'c', name: 'read' }, 'skipped')));
    expect(startedCallIds(context(live, null))).toEqual(['a', 'b']);
    expect(startedCallIds(context(live, ['z', 'a']))).toEqual(['z', 'a', 'b']);
    expect(startedCallIds(context(null, null))).toEqual([]);
  });

  it('a resumed reply’s calls are prepared again, told the positions already decided, the approvals given and their edits', () => {
    let seen: unknown = null;
    const logic = provideTurn().provide({
      actors: {
        prepareToolCalls: fromPromise(async ({ input }) => {
          seen = input;
          return new Promise<never>(() => {});
        }),
      },
    });
    const base = resumedInput(NO_FEATURES);
    const approvedArguments = { call_2: { path: 'edited' } };
    const resume = {
      ...(base.resume as NonNullable<TurnInput['resume']>),
      approvedCallIds: ['call_2'],
      approvedArguments,
    };
    const actor = createActor(logic, { input: { ...base, resume } }).start();
    expect(seen).toEqual({ turnIndex: 0, reply: resume.reply, decided: [0], approved: ['call_2'], approvedArguments });
    actor.stop();
  });
});

describe('turn: a reply the stream marked aborted', () => {
  it('ends the turn aborted even without an aborted error (the stop reason says it)', () => {
    const logic = provideTurn();
    const [assistant] = initialTransition(logic, turnInput(NO_FEATURES, 'freshLastChance'));
    expect(assistant.matches('ASSISTANT')).toBe(true);
    const id = activeInvocations(assistant).find((invocation) => invocation.src === 'callModel')?.id as string;
    const reply: ModelReply = { ...REPLIES.text, message: { ...REPLIES.text.message, stopReason: 'aborted' } };
    const [next] = transition(logic, assistant, doneEvent(id, reply) as never);
    expect(next.context.ending).toEqual({ kind: 'aborted', turnEndReason: 'aborted', error: null });
  });
});
