import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkToolParity, compactMessages, type Message } from 'agentchart';
import { isCompactionMarker } from '../../src/context/compact.js';
import { estimateContextTokens } from '../../src/context/estimate.js';

/** One assistant step: text, 0–3 tool calls answered in any order, optionally a note mid-batch. */
const stepArb = fc.record({
  text: fc.string({ maxLength: 80 }),
  results: fc.array(fc.string({ maxLength: 300 }), { maxLength: 3 }),
  order: fc.func(fc.integer()),
  note: fc.option(fc.boolean(), { nil: undefined }),
});
const turnArb = fc.record({
  user: fc.option(fc.string({ maxLength: 120 }), { nil: undefined }),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 3 }),
});
const historyArb = fc
  .record({
    prompt: fc.array(fc.string({ maxLength: 200 }), { minLength: 1, maxLength: 3 }),
    turns: fc.array(turnArb, { maxLength: 12 }),
  })
  .map(({ prompt, turns }) => {
    let nextId = 0;
    const messages: Message[] = prompt.map((content) => ({ role: 'user', content }));
    for (const turn of turns) {
      if (turn.user !== undefined) messages.push({ role: 'user', content: turn.user });
      for (const step of turn.steps) {
        const ids = step.results.map(() => `call-${nextId++}`);
        messages.push({
          role: 'assistant',
          content: [
            { type: 'text', text: step.text },
            ...ids.map((id) => ({ type: 'toolCall' as const, id, name: 'tool', arguments: { id } })),
          ],
          stopReason: ids.length > 0 ? 'toolUse' : 'stop',
        });
        if (ids.length > 0 && step.note !== undefined) {
          messages.push({ role: 'custom', customType: 'progress', content: 'working', includeInContext: step.note });
        }
        const answered = ids.map((id, index) => ({ id, content: step.results[index] }));
        answered.sort((a, b) => step.order(a.id) - step.order(b.id));
        for (const { id, content } of answered) {
          messages.push({ role: 'toolResult', toolCallId: id, toolName: 'tool', content, isError: false });
        }
      }
    }
    // The default anchor is the first prompt batch: the leading run of user messages.
    const anchor = messages.findIndex((message) => message.role !== 'user');
    return { messages, anchor: anchor < 0 ? messages.length : anchor };
  });

const tokens = (messages: readonly Message[]) => estimateContextTokens(messages);

/** Messages a (possibly compacted) history stands for: markers count what they replaced. */
const represented = (messages: readonly Message[]) =>
  messages.reduce((n, m) => n + (isCompactionMarker(m) ? (m.data as { removed: number }).removed : 1), 0);

/** Start of the smallest trailing window of whole units holding `keepRecent` messages. */
function minimalWindowStart(messages: readonly Message[], keepRecent: number): number {
  for (let index = messages.length - 1; index >= 0; index--) {
    const role = messages[index].role;
    if ((role === 'user' || role === 'assistant') && messages.length - index >= keepRecent) return index;
  }
  return 0;
}

function checkCompaction(input: Message[], anchor: number, maxTokens: number, keepRecent: number | undefined) {
  const result = compactMessages(input, { maxTokens, ...(keepRecent ? { keepRecent } : {}) });
  expect(checkToolParity(result)).toEqual({ ok: true });
  expect(result.slice(0, anchor)).toEqual(input.slice(0, anchor));
  result.slice(0, anchor).forEach((message, index) => expect(message).toBe(input[index]));
  expect(result.at(-1)).toBe(input.at(-1));
  expect(result.length).toBeLessThanOrEqual(input.length);
  expect(tokens(result)).toBeLessThanOrEqual(tokens(input));
  expect(represented(result)).toBe(represented(input));
  expect(result.filter(isCompactionMarker).length).toBeLessThanOrEqual(1);
  if (tokens(input) <= maxTokens) expect(result).toBe(input);

  // Kept messages are the input's own objects, in order.
  let cursor = 0;
  for (const message of result) {
    if (isCompactionMarker(message) && !input.includes(message)) continue;
    cursor = input.indexOf(message, cursor);
    expect(cursor).toBeGreaterThanOrEqual(0);
    cursor++;
  }

  // Over budget only when even anchor + minimal recent window (+ marker) cannot fit.
  if (tokens(result) > maxTokens && result !== input) {
    const start = minimalWindowStart(input, keepRecent ?? 1);
    const marker = result.find(isCompactionMarker);
    expect(marker).toBeDefined();
    expect(result).toEqual([...input.slice(0, anchor), marker, ...input.slice(start)]);
  }
  return result;
}

describe('compactMessages properties', () => {
  it('any history, any budget: parity, anchor, last message, never grows, fits when it can', () => {
    fc.assert(
      fc.property(
        historyArb,
        fc.double({ min: 0, max: 1.2, noNaN: true }),
        fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
        ({ messages, anchor }, share, keepRecent) => {
          const maxTokens = Math.floor(tokens(messages) * share);
          const once = checkCompaction(messages, anchor, maxTokens, keepRecent);
          // Compacting a compacted history again keeps every property and folds the old marker.
          checkCompaction(once, anchor, Math.floor(maxTokens / 2), keepRecent);
        },
      ),
      { numRuns: 300 },
    );
  });
});
