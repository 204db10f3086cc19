import { describe, expect, it } from 'vitest';
import { checkToolParity, type Message } from 'agentchart';
import { assistantMsg, resultMsg, sampleHistory, userMsg } from './fixtures.js';

describe('checkToolParity', () => {
  it('accepts a history where every call is answered once, in any order', () => {
    expect(checkToolParity(sampleHistory().messages)).toEqual({ ok: true });
    expect(checkToolParity([userMsg('go'), assistantMsg('', 'a', 'b'), resultMsg('b'), resultMsg('a')])).toEqual({
      ok: true,
    });
    expect(checkToolParity([])).toEqual({ ok: true });
  });

  it('reports a call left without a result before the next assistant message or the end', () => {
    const history: Message[] = [userMsg('go'), assistantMsg('', 'a', 'b'), resultMsg('a'), assistantMsg('next', 'c')];
    expect(checkToolParity(history)).toEqual({
      ok: false,
      violations: [
        'tool call b of message 1 has no result before message 3',
        'tool call c of message 3 has no result before the end of the history',
      ],
    });
  });

  it('reports orphan and duplicate results', () => {
    const history: Message[] = [resultMsg('x'), userMsg('go'), assistantMsg('', 'a'), resultMsg('a'), resultMsg('a')];
    expect(checkToolParity(history)).toEqual({
      ok: false,
      violations: [
        'tool result x at message 0 answers no pending tool call',
        'tool result a at message 4 answers no pending tool call',
      ],
    });
  });

  it('reports a repeated tool call id within one message', () => {
    const history: Message[] = [userMsg('go'), assistantMsg('', 'a', 'a'), resultMsg('a')];
    expect(checkToolParity(history)).toEqual({ ok: false, violations: ['message 1 repeats tool call id a'] });
  });
});
