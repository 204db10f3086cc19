import { z } from 'zod';
import {
  defineTool,
  type AgentEvent,
  type AgentEventOf,
  type AgentEventType,
  type ToolResultMessage,
  type Usage,
} from 'agentchart';

/** Shared pieces of the tool-lifecycle scenarios (T1–T12). */

export const USAGE: Usage = { input: 10, output: 5 };

/** The lifecycle of a one-turn tool call followed by a text answer, up to the tool events. */
export const TOOL_TURN_HEAD = [
  'agentStart',
  'turnStart',
  'beforeModelCall',
  'messageStart',
  'messageUpdate+',
  'messageEnd',
];
/** A closing text turn that ends the run naturally. */
export const TEXT_TURN = ['turnStart', 'beforeModelCall', 'messageStart', 'messageUpdate+', 'messageEnd', 'turnEnd'];

/** A tool whose arguments have a nested field, so validation errors carry a field path. */
export function readTool(
  execute: (args: { path: string; options?: { limit: number } | undefined }) => string | Promise<string> = (args) =>
    `contents of ${args.path}`,
) {
  return defineTool({
    name: 'read',
    description: 'Reads a file',
    parameters: z.object({ path: z.string(), options: z.object({ limit: z.number() }).optional() }),
    execute,
  });
}

/** A tool named `name` taking `{ id: string }`. */
export function idTool(
  name: string,
  execute: (
    args: { id: string },
    ctx: Parameters<Parameters<typeof defineTool>[0]['execute']>[1],
  ) => string | Promise<string>,
  extra: { requiresApproval?: boolean } = {},
) {
  return defineTool({ name, description: `${name} tool`, parameters: z.object({ id: z.string() }), execute, ...extra });
}

export function ofType<T extends AgentEventType>(events: AgentEvent[], type: T): AgentEventOf<T>[] {
  return events.filter((event): event is AgentEventOf<T> => event.type === type);
}

/** The tool-related events as short strings (`start:a`, `end:b!` for an error, `approved:a`, `denied:b`). */
export function toolTrace(events: AgentEvent[]): string[] {
  const out: string[] = [];
  for (const event of events) {
    if (event.type === 'toolApprovalRequested') out.push(`ask:${event.toolCallId}`);
    else if (event.type === 'toolApprovalResolved')
      out.push(`${event.approved ? 'approved' : 'denied'}:${event.toolCallId}`);
    else if (event.type === 'toolExecutionStart') out.push(`start:${event.toolCallId}`);
    else if (event.type === 'toolExecutionEnd') out.push(`end:${event.toolCallId}${event.isError ? '!' : ''}`);
  }
  return out;
}

/** Index of the first event matching `predicate` (fails loudly when absent). */
export function indexOf(events: AgentEvent[], predicate: (event: AgentEvent) => boolean): number {
  const index = events.findIndex(predicate);
  if (index < 0) throw new Error('expected event not found');
  return index;
}

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
