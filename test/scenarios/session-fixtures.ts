import { z } from 'zod';
import { defineTool } from 'agentchart';
import type { AgentEvent, AssistantMessage, Message, ToolResultMessage, Usage } from 'agentchart';
import { ofType } from '../support/harness.js';

// Builders shared by the session scenario tests (lifecycle, steering/abort/history, policies, scale).

/** The lifecycle of one turn as `lifecycle(events)` shows it. */
export const TEXT_TURN = ['turnStart', 'beforeModelCall', 'messageStart', 'messageUpdate+', 'messageEnd', 'turnEnd'];
export const TOOL_TURN = [
  'turnStart',
  'beforeModelCall',
  'messageStart',
  'messageUpdate+',
  'messageEnd',
  'toolExecutionStart',
  'toolExecutionEnd',
  'turnEnd',
];

export const ABORTED_RESULT = 'aborted: the run was cancelled before this tool call finished';

export const user = (content: string): Message => ({ role: 'user', content });

/** A text answer from the scripted model (whose default name is 'scripted'). */
export const said = (text: string, usage?: Usage): AssistantMessage => ({
  role: 'assistant',
  content: [{ type: 'text', text }],
  stopReason: 'stop',
  model: 'scripted',
  ...(usage ? { usage } : {}),
});

/** An assistant message of tool calls, with optional leading text. */
export const called = (
  calls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>,
  options: { text?: string; stopReason?: AssistantMessage['stopReason']; usage?: Usage } = {},
): AssistantMessage => ({
  role: 'assistant',
  content: [
    ...(options.text ? [{ type: 'text' as const, text: options.text }] : []),
    ...calls.map((call) => ({ type: 'toolCall' as const, ...call })),
  ],
  stopReason: options.stopReason ?? 'toolUse',
  model: 'scripted',
  ...(options.usage ? { usage: options.usage } : {}),
});

export const calledRead = (id: string, path: string, usage?: Usage): AssistantMessage =>
  called([{ id, name: 'read', arguments: { path } }], { usage });

export const toolResult = (
  toolCallId: string,
  toolName: string,
  content: string,
  isError = false,
): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId,
  toolName,
  content,
  isError,
});

export const readResult = (id: string, path: string): ToolResultMessage =>
  toolResult(id, 'read', `contents of ${path}`);

/** An instant tool: `read({ path })` → "contents of <path>". */
export const readTool = () =>
  defineTool({
    name: 'read',
    description: 'Reads a file',
    parameters: z.object({ path: z.string() }),
    execute: async ({ path }) => `contents of ${path}`,
  });

/** turnIndex of every event but agentStart/agentEnd. */
export const turnIndices = (events: readonly AgentEvent[]) =>
  events.filter((e) => e.type !== 'agentStart' && e.type !== 'agentEnd').map((e) => e.turnIndex);

/** The text the messageUpdate deltas streamed. */
export const streamedText = (events: readonly AgentEvent[]) =>
  ofType(events, 'messageUpdate')
    .map((e) => (e.delta.type === 'text' ? e.delta.text : ''))
    .join('');

/** `[turnIndex, reason]` of every turnEnd. */
export const turnEnds = (events: readonly AgentEvent[]) =>
  ofType(events, 'turnEnd').map((e) => [e.turnIndex, e.reason]);

/** The error a synchronous call throws (fails the test when it does not throw). */
export function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
}
