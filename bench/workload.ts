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

/** One model reply asking for `calls` instant tool calls. */
export function toolTurn(calls: number): ScriptEntry {
  return { toolCalls: Array.from({ length: calls }, (_, i) => ({ name: 'noop', arguments: { i } })) };
}

/**
 * `turns` replies of `callsPerTurn` tool calls, then a text answer that ends the session.
 * `onCall(callIndex)` runs at the start of every model call (timestamps for history growth).
 */
export function turnsModel(turns: number, callsPerTurn: number, onCall?: (callIndex: number) => void): ScriptedModel {
  const entry = toolTurn(callsPerTurn);
  return scriptedModel(
    (_request, callIndex) => {
      onCall?.(callIndex);
      if (callIndex < turns) return entry;
      return callIndex === turns ? FINAL_ANSWER : undefined;
    },
    { recordRequests: false },
  );
}

/** One reply with `tools` ticker calls of `updates` updates each, then a text answer. */
export function relayModel(tools: number, updates: number): ScriptedModel {
  const entry: ScriptEntry = { toolCalls: Array.from({ length: tools }, () => ({ name: 'ticker', arguments: { updates } })) };
  return scriptedModel([entry, FINAL_ANSWER], { recordRequests: false });
}

/** A model that streams nothing and holds the call open until the request is aborted. */
export function stalledModel(): ScriptedModel {
  return scriptedModel([{ stall: true }], { recordRequests: false });
}
