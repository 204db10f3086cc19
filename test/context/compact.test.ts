import { describe, expect, it } from 'vitest';
import { AgentError, checkToolParity, compactMessages, type Message } from 'agentchart';
import { COMPACTION_MARKER_TYPE, compactionMarker, isCompactionMarker } from '../../src/context/compact.js';
import { estimateContextTokens, estimateTokens } from '../../src/context/estimate.js';
import { assistantMsg, resultMsg, sampleHistory, userMsg } from './fixtures.js';

const tokens = (...messages: Message[]) => estimateContextTokens(messages);
const marker = (removed: number) => compactionMarker(removed);

describe('compactMessages', () => {
  it('returns the input array itself when it fits', () => {
    const { messages } = sampleHistory();
    expect(compactMessages(messages, { maxTokens: tokens(...messages) })).toBe(messages);
    expect(compactMessages([], { maxTokens: 0 })).toEqual([]);
  });

  it('keeps the anchor and the most recent units that fit, with one marker between', () => {
    const { messages, u0, u5, a6 } = sampleHistory();
    const budget = tokens(u0, marker(7), u5, a6);
    const result = compactMessages(messages, { maxTokens: budget });
    expect(result).toEqual([u0, marker(7), u5, a6]);
    expect(result[0]).toBe(u0);
    expect(result[2]).toBe(u5);
    expect(tokens(...result)).toBe(budget);

    expect(compactMessages(messages, { maxTokens: budget - 1 })).toEqual([u0, marker(8), a6]);
  });

  it('drops an assistant tool-call message and its results together', () => {
    const { messages, u0, r3, u5, a6 } = sampleHistory();
    // Room for the last result of [a4 r2 r3] but not for the whole unit: the unit goes whole.
    const budget = tokens(u0, marker(4), r3, u5, a6);
    const result = compactMessages(messages, { maxTokens: budget });
    expect(result).toEqual([u0, marker(7), u5, a6]);
    expect(checkToolParity(result)).toEqual({ ok: true });
  });

  it('keeps a trailing tool unit whole even over budget, and never starts the window with a result', () => {
    const { messages, u0, a4, r2, r3 } = sampleHistory();
    const history = messages.slice(0, 8);
    const result = compactMessages(history, { maxTokens: 0 });
    expect(result).toEqual([u0, marker(4), a4, r2, r3]);
    expect(checkToolParity(result)).toEqual({ ok: true });
  });

  it('folds an earlier marker into the new count on repeated compaction', () => {
    const { messages, u0, u5, a6 } = sampleHistory();
    const first = compactMessages(messages, { maxTokens: tokens(u0, marker(7), u5, a6) });
    const a8 = assistantMsg('Anything else?');
    const next = [...first, userMsg('No, thanks.'), a8];
    const second = compactMessages(next, { maxTokens: tokens(u0, marker(10), a8) });
    // 7 removed before + u5, a6 and the new user message.
    expect(second).toEqual([u0, marker(10), a8]);
    expect(second[1]).toMatchObject({
      role: 'custom',
      customType: COMPACTION_MARKER_TYPE,
      content: '[10 earlier messages were removed to fit the context window]',
      includeInContext: true,
      data: { removed: 10 },
    });
    expect(isCompactionMarker(second[1])).toBe(true);
    expect(second.filter(isCompactionMarker)).toHaveLength(1);
  });

  it('words the marker for a single message', () => {
    expect(marker(1).content).toBe('[1 earlier message was removed to fit the context window]');
  });

  it('leaves the marker out on request', () => {
    const { messages, u0, u5, a6 } = sampleHistory();
    expect(compactMessages(messages, { maxTokens: tokens(u0, u5, a6), marker: false })).toEqual([u0, u5, a6]);
  });

  it('never grows: returns the input when the marker would cost more than what it replaces', () => {
    const u0 = userMsg('a'.repeat(400));
    const a1 = assistantMsg('b');
    const u2 = userMsg('c'.repeat(400));
    const history = [u0, a1, u2];
    expect(estimateTokens(marker(1))).toBeGreaterThan(estimateTokens(a1));
    expect(compactMessages(history, { maxTokens: 10 })).toBe(history);
    expect(compactMessages(history, { maxTokens: 10, marker: false })).toEqual([u0, u2]);
  });

  it('keepRecent widens the window to whole units', () => {
    const { messages, u0, a4, r2, r3, u5, a6 } = sampleHistory();
    expect(compactMessages(messages, { maxTokens: 0, keepRecent: 3 })).toEqual([u0, marker(4), a4, r2, r3, u5, a6]);
    expect(compactMessages(messages, { maxTokens: 0, keepRecent: 10 })).toBe(messages);
  });

  it('anchor counts leading messages, rounded up to whole units; 0 keeps no anchor', () => {
    const { messages, u0, a1, r1, a6 } = sampleHistory();
    expect(compactMessages(messages, { maxTokens: 0, anchor: 2 })).toEqual([u0, a1, r1, marker(6), a6]);
    expect(compactMessages(messages, { maxTokens: 0, anchor: 0 })).toEqual([marker(9), a6]);
  });

  it('the default anchor is the first prompt batch', () => {
    const u0 = userMsg('first');
    const u1 = userMsg('second');
    const note: Message = { role: 'custom', customType: 'ui', content: 'attached', includeInContext: true };
    const a = assistantMsg('x'.repeat(400));
    const u2 = userMsg('y'.repeat(400));
    const last = assistantMsg('done');
    expect(compactMessages([u0, u1, note, a, u2, last], { maxTokens: 0 })).toEqual([u0, u1, note, marker(2), last]);
    // Without a user message nothing is anchored.
    expect(compactMessages([a, assistantMsg('y'.repeat(400)), last], { maxTokens: 0 })).toEqual([marker(2), last]);
  });

  it('keeps custom notes that arrive between a tool call and its results inside that unit', () => {
    const u0 = userMsg('go');
    const a1 = assistantMsg('', 'c1');
    const note: Message = { role: 'custom', customType: 'ui', content: 'running', includeInContext: false };
    const r1 = resultMsg('c1', 'r'.repeat(400));
    const last = assistantMsg('done');
    expect(compactMessages([u0, a1, note, r1, last], { maxTokens: 0 })).toEqual([u0, marker(3), last]);
  });

  it('rejects bad options with a typed error', () => {
    const { messages } = sampleHistory();
    for (const options of [
      { maxTokens: -1 },
      { maxTokens: Number.NaN },
      { maxTokens: 10, keepRecent: 0 },
      { maxTokens: 10, anchor: 1.5 },
    ]) {
      let caught: unknown;
      try {
        compactMessages(messages, options);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(AgentError);
      expect((caught as AgentError).code).toBe('InvalidOptions');
    }
  });
});
