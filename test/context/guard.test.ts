import { describe, expect, it } from 'vitest';
import { AgentError, type Message } from 'agentchart';
import { compactionMarker } from '../../src/context/compact.js';
import { estimateContextTokens } from '../../src/context/estimate.js';
import { createContextGuard, type ContextGuardOptions } from '../../src/context/guard.js';
import { sampleHistory } from './fixtures.js';

// Estimates of sampleHistory(): u0 13, a1 16, r1 56, a2 11, u3 9, a4 19, r2 36, r3 16, u5 8, a6 14 = 198.
// A marker costs 19.

describe('createContextGuard without a transform', () => {
  it('returns the same array untouched when the estimate fits', async () => {
    const { messages } = sampleHistory();
    const guard = createContextGuard({ maxTokens: 198 });
    expect(guard.maxTokens).toBe(198);
    expect(guard.estimate(messages)).toBe(198);
    const result = await guard.prepare(messages, { overflow: false });
    expect(result).toEqual({ ok: true, messages, compacted: null, transformRejected: null });
    expect(result.ok && result.messages).toBe(messages);
  });

  it('compacts to 70% of maxTokens once the estimate exceeds it', async () => {
    const { messages, u0, u3, a4, r2, r3, u5, a6 } = sampleHistory();
    const guard = createContextGuard({ maxTokens: 197 });
    // Budget floor(0.7 × 197) = 137: anchor 13 + marker 19 + [u3 … a6] 102 = 134; a2 would make 145.
    expect(await guard.prepare(messages, { overflow: false })).toEqual({
      ok: true,
      messages: [u0, compactionMarker(3), u3, a4, r2, r3, u5, a6],
      compacted: { before: { messages: 10, tokens: 198 }, after: { messages: 8, tokens: 134 } },
      transformRejected: null,
    });
  });

  it('on overflow compacts to 70% of the current estimate even when it is under maxTokens', async () => {
    const { messages, u0, u3, a4, r2, r3, u5, a6 } = sampleHistory();
    const guard = createContextGuard({ maxTokens: 1_000 });
    // Budget floor(0.7 × 198) = 138.
    const result = await guard.prepare(messages, { overflow: true });
    expect(result).toEqual({
      ok: true,
      messages: [u0, compactionMarker(3), u3, a4, r2, r3, u5, a6],
      compacted: { before: { messages: 10, tokens: 198 }, after: { messages: 8, tokens: 134 } },
      transformRejected: null,
    });
  });

  it('counts the system prompt and tool specs against the budget', async () => {
    const { messages, u0, u5, a6 } = sampleHistory();
    const systemPrompt = 'x'.repeat(400); // 104
    const tools = [{ name: 'read', description: 'Read a file', parameters: { type: 'object' } }]; // 12
    expect(estimateContextTokens(messages, systemPrompt, tools)).toBe(314);
    const fits = createContextGuard({ maxTokens: 314 });
    const untouched = await fits.prepare(messages, { overflow: false, systemPrompt, tools });
    expect(untouched).toEqual({ ok: true, messages, compacted: null, transformRejected: null });

    // Budget floor(0.7 × 313) − 116 = 103 for messages: anchor + marker + [u5 a6] = 54; a4's unit would make 125.
    const guard = createContextGuard({ maxTokens: 313 });
    expect(await guard.prepare(messages, { overflow: false, systemPrompt, tools })).toEqual({
      ok: true,
      messages: [u0, compactionMarker(7), u5, a6],
      compacted: { before: { messages: 10, tokens: 314 }, after: { messages: 4, tokens: 170 } },
      transformRejected: null,
    });
  });

  it('reports no compaction when nothing can be dropped', async () => {
    const { u0, a6 } = sampleHistory();
    const messages = [u0, a6];
    const result = await createContextGuard({ maxTokens: 10 }).prepare(messages, { overflow: true });
    expect(result).toEqual({ ok: true, messages, compacted: null, transformRejected: null });
    expect(result.ok && result.messages).toBe(messages);
  });

  it('rejects bad options with a typed error', () => {
    const bad = [
      { maxTokens: 0 },
      { maxTokens: Number.NaN },
      { maxTokens: 10, keepRecent: 0 },
      { maxTokens: 10, transform: 'x' },
    ];
    for (const options of bad) {
      expect(() => createContextGuard(options as ContextGuardOptions)).toThrow(AgentError);
      try {
        createContextGuard(options as ContextGuardOptions);
      } catch (error) {
        expect((error as AgentError).code).toBe('InvalidOptions');
      }
    }
  });
});

describe('createContextGuard with a transform', () => {
  it('calls the transform on every prepare with the overflow flag', async () => {
    const { messages } = sampleHistory();
    const calls: Array<{ count: number; overflow: boolean }> = [];
    const guard = createContextGuard({
      maxTokens: 100, // over budget: the transform still decides alone
      transform: (input, { overflow }) => {
        calls.push({ count: input.length, overflow });
        return input;
      },
    });
    const first = await guard.prepare(messages, { overflow: false });
    const second = await guard.prepare(messages, { overflow: true });
    expect(calls).toEqual([
      { count: 10, overflow: false },
      { count: 10, overflow: true },
    ]);
    // Same content back: the caller gets its own array and no compaction.
    expect(first).toEqual({ ok: true, messages, compacted: null, transformRejected: null });
    expect(first.ok && first.messages).toBe(messages);
    expect(second.ok && second.messages).toBe(messages);
  });

  it('hands the transform a copy, so mutating it leaves the history alone', async () => {
    const { messages, u0 } = sampleHistory();
    const guard = createContextGuard({ maxTokens: 1_000, transform: (input) => (input.splice(1), input) });
    expect(await guard.prepare(messages, { overflow: true })).toEqual({
      ok: true,
      messages: [u0],
      compacted: { before: { messages: 10, tokens: 198 }, after: { messages: 1, tokens: 13 } },
      transformRejected: null,
    });
    expect(messages).toHaveLength(10);
  });

  it('accepts an async transform that returns new, valid messages', async () => {
    const { messages, u0, a2, u3, a4, r3, u5, a6 } = sampleHistory();
    const summary: Message = {
      role: 'toolResult',
      toolCallId: 'c2',
      toolName: 'read',
      content: 'short',
      isError: false,
    };
    const guard = createContextGuard({
      maxTokens: 1_000,
      transform: async (input) => {
        await Promise.resolve();
        return [input[0], ...input.slice(3, 6), summary, ...input.slice(7)];
      },
    });
    // Estimate: 13 + 11 + 9 + 19 + summary 7 + 16 + 8 + 14 = 97.
    expect(await guard.prepare(messages, { overflow: true })).toEqual({
      ok: true,
      messages: [u0, a2, u3, a4, summary, r3, u5, a6],
      compacted: { before: { messages: 10, tokens: 198 }, after: { messages: 8, tokens: 97 } },
      transformRejected: null,
    });
  });

  it('turns a throwing or rejecting transform into a typed failure', async () => {
    const { messages } = sampleHistory();
    const sync = createContextGuard({
      maxTokens: 1_000,
      transform: () => {
        throw new Error('boom');
      },
    });
    expect(await sync.prepare(messages, { overflow: false })).toEqual({
      ok: false,
      error: { code: 'contextTransformFailed', message: 'context transform failed: boom' },
    });
    const async = createContextGuard({ maxTokens: 1_000, transform: () => Promise.reject('nope') });
    expect(await async.prepare(messages, { overflow: true })).toEqual({
      ok: false,
      error: { code: 'contextTransformFailed', message: 'context transform failed: nope' },
    });
  });

  it('replaces output that breaks parity with the default compaction and reports it', async () => {
    const { messages, u0, u3, a4, r2, r3, u5, a6 } = sampleHistory();
    const dropResult = (input: Message[]) =>
      input.filter((message) => message.role !== 'toolResult' || message.toolCallId !== 'c1');
    const guard = createContextGuard({ maxTokens: 1_000, transform: dropResult });
    const rejection = {
      reason: 'transform output breaks tool-call/result parity',
      violations: ['tool call c1 of message 1 has no result before message 2'],
    };
    // Under budget: the default leaves the history as is.
    const calm = await guard.prepare(messages, { overflow: false });
    expect(calm).toEqual({ ok: true, messages, compacted: null, transformRejected: rejection });
    expect(calm.ok && calm.messages).toBe(messages);
    // On overflow: the default compaction.
    expect(await guard.prepare(messages, { overflow: true })).toEqual({
      ok: true,
      messages: [u0, compactionMarker(3), u3, a4, r2, r3, u5, a6],
      compacted: { before: { messages: 10, tokens: 198 }, after: { messages: 8, tokens: 134 } },
      transformRejected: rejection,
    });
  });

  it('rejects output that is not an array, is empty, or holds invalid messages', async () => {
    const { messages } = sampleHistory();
    const rejectionFor = async (output: unknown) => {
      const guard = createContextGuard({ maxTokens: 1_000, transform: () => output as Message[] });
      const result = await guard.prepare(messages, { overflow: false });
      expect(result.ok && result.messages).toBe(messages);
      return result.ok ? result.transformRejected : null;
    };
    expect(await rejectionFor(undefined)).toEqual({
      reason: 'transform did not return an array of messages',
      violations: ['got undefined'],
    });
    expect(await rejectionFor(null)).toEqual({
      reason: 'transform did not return an array of messages',
      violations: ['got null'],
    });
    expect(await rejectionFor([])).toEqual({ reason: 'transform returned no messages', violations: [] });
    const invalid = await rejectionFor([...messages, { role: 'bogus', content: 1 }]);
    expect(invalid?.reason).toBe('transform returned invalid messages');
    expect(invalid?.violations).toHaveLength(1);
    expect(invalid?.violations[0]).toMatch(/^message 10: /);
  });
});
