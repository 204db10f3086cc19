import { defineTool, type AnyTool } from 'agentchart';
import { scriptedModel, type ScriptEntry, type ScriptedModel } from 'agentchart/testing';
import { z } from 'zod';

/** The benchmark's tools and scripts, shared by agentchart and the hand-written loop. */

/** An instant tool: validates `{ i: number }` and returns synchronously. */
export const instantTool = defineTool({
  name: 'noop',
  description: 'Returns at once.',
  parameters: z.object({ i: z.number() }),
  execute: () => 'ok',
}) as unknown as AnyTool;

/** A tool that sends `updates` awaited progress updates, numbered from 0, then returns. */
export const tickerTool = defineTool({
  name: 'ticker',
  description: 'Reports progress `updates` times.',
  parameters: z.object({ updates: z.number().int().nonnegative() }),
  execute: async ({ updates }, ctx) => {
    for (let i = 0; i < updates; i++) await ctx.update(i);
    return `sent ${updates}`;
  },
}) as unknown as AnyTool;

export const benchTools: AnyTool[] = [instantTool, tickerTool];

export const FINAL_ANSWER: ScriptEntry = { text: 'done' };

/** `valid`: `{ i }` as the `noop` schema wants; `invalid`: `i` is a string, which every library must reject. */
export type ArgumentsKind = 'valid' | 'invalid';

/** One model reply asking for `calls` instant tool calls. */
export function toolTurn(calls: number, kind: ArgumentsKind = 'valid'): ScriptEntry {
  const argumentsOf = (i: number) => (kind === 'valid' ? { i } : { i: `not a number ${i}` });
  return { toolCalls: Array.from({ length: calls }, (_, i) => ({ name: 'noop', arguments: argumentsOf(i) })) };
}

/**
 * The script every implementation replays: model call `callIndex` (0-based) answers `callsPerTurn`
 * tool calls while `callIndex < turns`, then the text answer; `undefined` past the end (an overrun).
 */
export function turnsScript(
  turns: number,
  callsPerTurn: number,
  kind: ArgumentsKind = 'valid',
): (callIndex: number) => ScriptEntry | undefined {
  const entry = toolTurn(callsPerTurn, kind);
  return (callIndex) => (callIndex < turns ? entry : callIndex === turns ? FINAL_ANSWER : undefined);
}

/**
 * `turns` replies of `callsPerTurn` tool calls, then a text answer that ends the session.
 * `onCall(callIndex)` runs at the start of every model call (timestamps for history growth).
 */
export function turnsModel(
  turns: number,
  callsPerTurn: number,
  onCall?: (callIndex: number) => void,
  kind: ArgumentsKind = 'valid',
): ScriptedModel {
  const script = turnsScript(turns, callsPerTurn, kind);
  return scriptedModel(
    (_request, callIndex) => {
      onCall?.(callIndex);
      return script(callIndex);
    },
    { recordRequests: false },
  );
}

/** The tool-call id `scriptedModel` gives call `index` of model call `callIndex`; the peers' models use the same. */
export function scriptedCallId(callIndex: number, index: number): string {
  return `call_${callIndex}_${index}`;
}

/**
 * What one model call streams, as the peers' adapters and the replay model replay it: the text as
 * its deltas, then the tool calls (each call's arguments JSON streamed in three pieces).
 */
export interface Reply {
  text: readonly string[];
  toolCalls: readonly { name: string; arguments: Record<string, unknown> }[];
}

/** A script of replies by model call (0-based); `undefined` past the end (an overrun). */
export type ReplyScript = (callIndex: number) => Reply | undefined;

/** `turnsScript` as replies: the text in about three pieces, as `scriptedModel` streams it. */
export function turnsReplies(turns: number, callsPerTurn: number, kind: ArgumentsKind = 'valid'): ReplyScript {
  const replyOf = (entry: ScriptEntry): Reply => ({
    text: threePieces(entry.text ?? ''),
    toolCalls: (entry.toolCalls ?? []).map((call) => ({ name: call.name, arguments: call.arguments ?? {} })),
  });
  const tool = replyOf(toolTurn(callsPerTurn, kind));
  const answer = replyOf(FINAL_ANSWER);
  return (callIndex) => (callIndex < turns ? tool : callIndex === turns ? answer : undefined);
}

/** Splits a delta into about three pieces, as `scriptedModel` does, so every model streams as many events. */
export function threePieces(text: string): string[] {
  const size = Math.max(1, Math.ceil(text.length / 3));
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += size) pieces.push(text.slice(start, start + size));
  return pieces;
}

/** What a driver reads back from a library's own result after a session, to prove the work was done. */
export interface WorkDone {
  /** `completed` when the session ended on the final text answer; otherwise the library's own status or reason. */
  status: string;
  turns: number;
  toolCallsExecuted: number;
}

/** One reply with `tools` ticker calls of `updates` updates each, then a text answer. */
export function relayModel(tools: number, updates: number): ScriptedModel {
  const entry: ScriptEntry = {
    toolCalls: Array.from({ length: tools }, () => ({ name: 'ticker', arguments: { updates } })),
  };
  return scriptedModel([entry, FINAL_ANSWER], { recordRequests: false });
}

/** A model that streams nothing and holds the call open until the request is aborted. */
export function stalledModel(): ScriptedModel {
  return scriptedModel([{ stall: true }], { recordRequests: false });
}
