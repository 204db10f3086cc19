import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type AgentOptions, type Message, type Model, type PostTurnVerdict } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { resultsOf, runOn, setups } from './json-setups.js';

/**
 * The other values JSON cannot hold that a tool or a caller hands over while a session runs: a
 * schema's output, approved or rewritten arguments, a post-turn replacement, a tool's question.
 * Handled where they are handed over, the same with or without a store; never a failed run.
 */

/** A tool whose schema turns the model's JSON into what JSON cannot hold, and echoes what it got. */
const ledger = defineTool({
  name: 'ledger',
  description: 'Books an amount.',
  parameters: z.object({
    amount: z.string().transform((text) => BigInt(text)),
    at: z.string().transform((text) => new Date(text)),
    note: z.unknown().optional(),
  }),
  execute: ({ amount, at, note }) =>
    `booked ${typeof amount} ${String(amount)} at ${at instanceof Date ? at.toISOString() : typeof at} note ${typeof note}`,
});
const ledgerCall = (id: string) => ({ id, name: 'ledger', arguments: { amount: '5', at: '2026-01-02T00:00:00.000Z' } });
const twoTurns = (id: string) => scriptedModel([{ toolCalls: [ledgerCall(id)] }, { text: 'done' }]);
describe.each(setups)('other values a tool or a caller hands over (%s)', (_name, setup) => {
  const runWith = (options: Omit<AgentOptions, 'model'>, model: Model) => runOn(setup, model, options);

  it("a schema's output JSON cannot hold (a BigInt, a Date) runs the tool as it is and is published as a trace writes it", async () => {
    const { result, events, stored } = await runWith({ tools: [ledger] }, twoTurns('l1'));
    expect(result).toMatchObject({
      status: 'completed',
      endReason: 'naturalEnd',
      counters: { toolCallsExecuted: 1, toolCallsFailed: 0 },
    });
    expect(resultsOf(result.messages)).toEqual(['booked bigint 5 at 2026-01-02T00:00:00.000Z note undefined']);
    const published = { amount: '5n', at: '2026-01-02T00:00:00.000Z' };
    expect(events.find((event) => event.type === 'toolExecutionStart')).toMatchObject({ arguments: published });
    if (stored)
      expect(stored.find((event) => event.type === 'toolExecutionStart')).toMatchObject({ arguments: published });
  });

  it('approved arguments JSON cannot hold, from an approval handler, are a denial naming the place', async () => {
    const { result, events } = await runWith(
      {
        tools: [ledger],
        approvalMode: 'always',
        approval: () => ({ approved: true, arguments: { amount: '7', at: '2026-01-02', note: 7n } }),
      },
      twoTurns('l2'),
    );
    const why =
      'the approval handler returned an invalid decision: the approval decision holds what JSON cannot: decision.arguments.note is a BigInt';
    expect(resultsOf(result.messages)).toEqual([expect.stringContaining(why)]);
    expect(events.filter((event) => event.type === 'policyError')).toEqual([
      expect.objectContaining({ slot: 'approval', message: expect.stringContaining(why) }),
    ]);
    expect(result).toMatchObject({
      status: 'completed',
      counters: { approvalsRequested: 1, approvalsDenied: 1, toolCallsExecuted: 0, failureCodes: {} },
    });
  });

  it('rewritten arguments JSON cannot hold, from a pre-dispatch policy, are a policyError and the call runs as the model sent it', async () => {
    const { result, events } = await runWith(
      {
        tools: [ledger],
        policies: {
          preDispatch: [() => ({ verdict: 'continue', arguments: { amount: '8', at: 'x', note: () => 1 } })],
        },
      },
      twoTurns('l3'),
    );
    expect(events.filter((event) => event.type === 'policyError')).toEqual([
      expect.objectContaining({
        slot: 'preDispatch',
        message: expect.stringContaining('the verdict holds what JSON cannot: verdict.arguments.note is a function'),
      }),
    ]);
    expect(resultsOf(result.messages)).toEqual(['booked bigint 5 at 2026-01-02T00:00:00.000Z note undefined']);
    expect(result).toMatchObject({ status: 'completed', counters: { toolCallsExecuted: 1 } });
  });

  it('a post-turn replacement whose tool calls hold what JSON cannot is a policyError, never an internal failure', async () => {
    const { result, events } = await runWith(
      {
        tools: [ledger],
        policies: {
          postTurn: [
            ({ assistant }): PostTurnVerdict =>
              assistant?.content.some((block) => block.type === 'toolCall')
                ? {
                    verdict: 'replace',
                    assistant: {
                      ...assistant,
                      content: assistant.content.map((block) =>
                        block.type === 'toolCall' ? { ...block, arguments: { ...block.arguments, extra: 1n } } : block,
                      ),
                    },
                  }
                : { verdict: 'continue' },
          ],
        },
      },
      twoTurns('l4'),
    );
    expect(events.filter((event) => event.type === 'policyError')).toEqual([
      expect.objectContaining({
        slot: 'postTurn',
        message: expect.stringMatching(/verdict\.assistant\.content\[0\]\.arguments\.extra is a BigInt/),
      }),
    ]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd', counters: { toolCallsExecuted: 1 } });
    expect(result.messages[1]).toMatchObject({
      content: [{ type: 'toolCall', arguments: ledgerCall('l4').arguments }],
    });
  });

  it("a tool's question whose schema JSON cannot hold is declined, saying why, and nothing is published", async () => {
    const asks = defineTool({
      name: 'asks',
      description: 'Asks the user.',
      parameters: z.object({}),
      execute: async (_args, ctx) =>
        JSON.stringify(await ctx.elicit?.({ message: 'How many?', requestedSchema: { type: 'object', maximum: 10n } })),
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'q1', name: 'asks', arguments: {} }] }, { text: 'done' }]);
    const { result, events } = await runWith(
      { tools: [asks], approval: () => ({ approved: true, arguments: { n: 1 } }) },
      model,
    );
    expect(resultsOf(result.messages)).toEqual([
      JSON.stringify({
        action: 'decline',
        reason: 'the question was not asked: requestedSchema.maximum is a BigInt, which JSON cannot hold',
      }),
    ]);
    expect(events.some((event) => event.type.startsWith('elicitation'))).toBe(false);
    expect(result).toMatchObject({ status: 'completed', counters: { toolCallsExecuted: 1, toolCallsFailed: 0 } });
  });

  it('a context transform whose messages hold what JSON cannot is rejected (policyError) and the default compaction is used', async () => {
    const model = scriptedModel([{ text: 'Heard.' }]);
    const { result, events } = await runWith(
      {
        context: {
          maxTokens: 100_000,
          transform: (messages) => [
            ...messages,
            {
              role: 'assistant',
              content: [{ type: 'toolCall', id: 'x1', name: 'ledger', arguments: { amount: 5n } }],
              stopReason: 'toolUse',
            } as unknown as Message,
            { role: 'toolResult', toolCallId: 'x1', toolName: 'ledger', content: 'booked', isError: false },
          ],
        },
      },
      model,
    );
    expect(events.filter((event) => event.type === 'policyError')).toEqual([
      expect.objectContaining({
        slot: 'contextTransform',
        message: expect.stringContaining('message 1.content[0].arguments.amount is a BigInt, which JSON cannot hold'),
      }),
    ]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd', counters: { modelCalls: 1 } });
    expect(events.find((event) => event.type === 'beforeModelCall')).toMatchObject({
      messages: [{ role: 'user', content: 'go' }],
    });
  });
});
