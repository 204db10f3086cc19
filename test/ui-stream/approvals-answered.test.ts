import { describe, expect, it } from 'vitest';
import { approvalsAnswered } from 'agentchart/ai-sdk-ui-client';

describe('approvalsAnswered (useChat sendAutomaticallyWhen)', () => {
  const tool = (state: string, approval: object | undefined = { id: `a-${state}` }) => ({
    type: 'tool-deploy',
    toolCallId: 'd1',
    state,
    ...(approval ? { approval } : {}),
  });
  const last = (...parts: object[]) => ({ messages: [{ role: 'assistant', parts }] });

  it('sends once every approval request of the last assistant message is answered, other calls still waiting', () => {
    expect(approvalsAnswered(last(tool('approval-responded'), tool('input-available', undefined)))).toBe(true);
    expect(approvalsAnswered(last(tool('approval-responded'), tool('approval-responded')))).toBe(true);
  });

  it('waits while one is unanswered; never sends without an answer, or after a user message', () => {
    expect(approvalsAnswered(last(tool('approval-responded'), tool('approval-requested')))).toBe(false);
    expect(approvalsAnswered(last(tool('output-available'), { type: 'text', text: 'hi' }))).toBe(false);
    expect(approvalsAnswered({ messages: [{ role: 'user', parts: [tool('approval-responded')] }] })).toBe(false);
    expect(approvalsAnswered({ messages: [] })).toBe(false);
  });
});
