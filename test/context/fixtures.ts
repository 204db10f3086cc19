import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from 'agentchart';

export const userMsg = (content: string): UserMessage => ({ role: 'user', content });

export const assistantMsg = (text: string, ...callIds: string[]): AssistantMessage => ({
  role: 'assistant',
  content: [
    ...(text ? [{ type: 'text' as const, text }] : []),
    ...callIds.map((id) => ({ type: 'toolCall' as const, id, name: 'read', arguments: { path: `${id}.txt` } })),
  ],
  stopReason: callIds.length > 0 ? 'toolUse' : 'stop',
});

export const resultMsg = (toolCallId: string, content = `contents of ${toolCallId}`): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId,
  toolName: 'read',
  content,
  isError: false,
});

/**
 * Ten messages in seven units: [u0] [a1 r1] [a2] [u3] [a4 r2 r3] [u5] [a6].
 */
export function sampleHistory() {
  const u0 = userMsg('Summarize the project files, please.');
  const a1 = assistantMsg('Reading the first file.', 'c1');
  const r1 = resultMsg('c1', 'x'.repeat(200));
  const a2 = assistantMsg('The first file is a config.');
  const u3 = userMsg('Now the other two.');
  const a4 = assistantMsg('Reading both.', 'c2', 'c3');
  const r2 = resultMsg('c2', 'y'.repeat(120));
  const r3 = resultMsg('c3', 'z'.repeat(40));
  const u5 = userMsg('And the summary?');
  const a6 = assistantMsg('Here is the summary of all three files.');
  const messages: Message[] = [u0, a1, r1, a2, u3, a4, r2, r3, u5, a6];
  return { messages, u0, a1, r1, a2, u3, a4, r2, r3, u5, a6 };
}
