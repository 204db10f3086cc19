import { describe, expect, it } from 'vitest';
import type { Message } from 'agentchart';
import type { ToolSpec } from 'agentchart/model-kit';
import {
  TokenLedger,
  estimateContextTokens,
  estimateSystemPromptTokens,
  estimateTokens,
  estimateToolSpecTokens,
} from '../../src/context/estimate.js';

const user: Message = { role: 'user', content: 'hello world!' }; // 12 chars → 3 + 4
const assistant: Message = {
  role: 'assistant',
  // 'abcd' (4) + id 'c1' (2) + name 'read' (4) + '{"path":"a.txt"}' (16) = 26 chars → 7 + 4
  content: [
    { type: 'text', text: 'abcd' },
    { type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'a.txt' } },
  ],
  stopReason: 'toolUse',
};
const result: Message = { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: '12345678', isError: false }; // 14 → 4 + 4
const hiddenNote: Message = { role: 'custom', customType: 'ui', content: 'x'.repeat(100), includeInContext: false };
const visibleNote: Message = { role: 'custom', customType: 'ui', content: 'abc', includeInContext: true }; // 3 → 1 + 4
const tool: ToolSpec = { name: 'read', description: 'Read a file', parameters: { type: 'object' } }; // 4 + 11 + 17 = 32 → 8 + 4

describe('estimateTokens', () => {
  it('follows the documented chars/4 + 4 rule for every role', () => {
    expect(estimateTokens(user)).toBe(7);
    expect(estimateTokens(assistant)).toBe(11);
    expect(estimateTokens(result)).toBe(8);
    expect(estimateTokens(hiddenNote)).toBe(0);
    expect(estimateTokens(visibleNote)).toBe(5);
    expect(estimateTokens({ role: 'user', content: '' })).toBe(4);
  });

  it('counts thinking text and tool-call argument JSON', () => {
    const thinking: Message = {
      role: 'assistant',
      content: [{ type: 'thinking', text: 'x'.repeat(40) }],
      stopReason: 'stop',
    };
    expect(estimateTokens(thinking)).toBe(14);
    const bigArgs: Message = {
      role: 'assistant',
      content: [{ type: 'toolCall', id: 'id', name: 'n', arguments: { text: 'y'.repeat(989) } }],
      stopReason: 'toolUse',
    };
    // id 2 + name 1 + '{"text":"' 9 + 989 + '"}' 2 = 1003 chars → 251 + 4
    expect(estimateTokens(bigArgs)).toBe(255);
  });

  it('is stable: same value on every call and for structurally equal copies', () => {
    const copy = structuredClone(assistant);
    const values = [estimateTokens(assistant), estimateTokens(assistant), estimateTokens(copy)];
    expect(values).toEqual([11, 11, 11]);
  });

  it('does not throw on arguments JSON cannot encode', () => {
    const args: Record<string, unknown> = { n: 1n };
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const make = (a: Record<string, unknown>): Message => ({
      role: 'assistant',
      content: [{ type: 'toolCall', id: 'c', name: 't', arguments: a }],
      stopReason: 'toolUse',
    });
    // 'c' + 't' + '[object Object]' (15) = 17 chars → 5 + 4
    expect(estimateTokens(make(args))).toBe(9);
    expect(estimateTokens(make(cyclic))).toBe(9);
  });
});

describe('estimateContextTokens', () => {
  it('adds system prompt and tool specs to the messages', () => {
    expect(estimateSystemPromptTokens('You are helpful.')).toBe(8);
    expect(estimateSystemPromptTokens('')).toBe(0);
    expect(estimateSystemPromptTokens(undefined)).toBe(0);
    expect(estimateToolSpecTokens(tool)).toBe(12);
    const messages = [user, assistant, result, hiddenNote, visibleNote];
    expect(estimateContextTokens(messages)).toBe(31);
    expect(estimateContextTokens(messages, 'You are helpful.', [tool])).toBe(51);
    expect(estimateContextTokens([])).toBe(0);
  });
});

describe('TokenLedger', () => {
  it('gives the same totals as estimateContextTokens', () => {
    const ledger = new TokenLedger();
    const messages = [user, assistant, result, hiddenNote, visibleNote];
    expect(ledger.context(messages, 'You are helpful.', [tool])).toBe(51);
    expect(ledger.messages(messages)).toBe(31);
    expect(ledger.overhead('You are helpful.', [tool])).toBe(20);
    expect(ledger.context(messages, 'You are helpful.', [tool])).toBe(51);
  });

  it('caches per message object: an estimated message is not re-estimated', () => {
    const ledger = new TokenLedger();
    const message: Message = { role: 'user', content: 'abcd' };
    expect(ledger.message(message)).toBe(5);
    // Messages are immutable values; the cached estimate proves the second call did no work.
    (message as { content: string }).content = 'x'.repeat(400);
    expect(ledger.message(message)).toBe(5);
    expect(estimateTokens(message)).toBe(104);
  });

  it('tracks a 2,000-turn session growing one turn at a time', () => {
    const ledger = new TokenLedger();
    const history: Message[] = [];
    let expected = 0;
    for (let turn = 0; turn < 2_000; turn++) {
      const question: Message = { role: 'user', content: `question ${turn}` };
      const answer: Message = {
        role: 'assistant',
        content: [{ type: 'text', text: `answer ${turn}` }],
        stopReason: 'stop',
      };
      history.push(question, answer);
      expected += estimateTokens(question) + estimateTokens(answer);
      expect(ledger.messages(history)).toBe(expected);
    }
    expect(expected).toBe(estimateContextTokens(history));
  });
});
