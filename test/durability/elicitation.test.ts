import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, INTERRUPTED_BY_RESTART, memoryStore, type AgentEvent } from 'agentchart';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { expectCounters } from '../support/harness.js';

// A running call's question (ctx.elicit, as an MCP server's elicitation) on a stored session with no
// approval handler waits for resolveApproval; a restart cuts it: the resumed run resolves it as
// cancelled and the call follows its replay rule. The stored log pairs the question either way.

function asking(replay: 'never' | 'safe', asked: string[]) {
  return defineTool({
    name: 'ask',
    description: 'Asks the user for a name.',
    parameters: z.object({}),
    replay,
    execute: async (_args, ctx) => {
      asked.push(ctx.toolCallId);
      const answer = await ctx.elicit?.({ message: 'your name?', requestedSchema: { type: 'object' } });
      return answer?.action === 'accept' ? `hello ${String(answer.content.name)}` : `no answer (${answer?.action})`;
    },
  });
}

const model = () =>
  scriptedModel([
    { toolCalls: [{ id: 'q1', name: 'ask', arguments: {} }], usage: { input: 4, output: 2 } },
    { text: 'Done.', usage: { input: 4, output: 2 } },
  ]);

async function untilPending(agent: ReturnType<typeof createAgent>) {
  for (let i = 0; i < 100 && agent.pendingApprovals().length === 0; i++) await new Promise((r) => setTimeout(r, 0));
  return agent.pendingApprovals()[0];
}

const questionEvents = (events: AgentEvent[]) =>
  events.flatMap((event) =>
    event.type === 'elicitationRequested' || event.type === 'elicitationResolved'
      ? [event.type === 'elicitationResolved' ? `${event.type}:${event.action}:${event.reason ?? ''}` : event.type]
      : [],
  );

describe('a question a restart cut', () => {
  it("replay 'never': resolved as cancelled, the call ends interrupted, the stored log pairs", async () => {
    const store = memoryStore();
    const asked: string[] = [];
    const first = createAgent({ model: model(), tools: [asking('never', asked)], store, sessionId: 's' });
    await first.ready;
    void first.prompt('ask');
    expect(await untilPending(first)).toMatchObject({ toolCallId: 'q1', elicitation: { message: 'your name?' } });
    await first.close(); // as if the process stopped here: nothing more is written

    const second = createAgent({
      model: scriptedModel([{ text: 'Done.', usage: { input: 4, output: 2 } }]),
      tools: [asking('never', asked)],
      store,
      sessionId: 's',
    });
    const { resumedRun } = await second.ready;
    const result = await resumedRun!.result;
    const events = await store.loadEvents('s');

    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(asked).toEqual(['q1']);
    expect(questionEvents(events)).toEqual([
      'elicitationRequested',
      'elicitationResolved:cancel:interrupted by restart',
    ]);
    expect(events.find((e) => e.type === 'toolExecutionEnd')).toMatchObject({ result: INTERRUPTED_BY_RESTART });
    expect(second.pendingApprovals()).toEqual([]);
    expect(checkInvariants(events, result.messages).violations).toEqual([]);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      toolCallsFailed: 1,
      tokensIn: 8,
      tokensOut: 4,
    });
  });

  it("replay 'safe': the re-run asks again, resolveApproval answers it in the new process", async () => {
    const store = memoryStore();
    const asked: string[] = [];
    const first = createAgent({ model: model(), tools: [asking('safe', asked)], store, sessionId: 's' });
    await first.ready;
    void first.prompt('ask');
    await untilPending(first);
    await first.close();

    const second = createAgent({
      model: scriptedModel([{ text: 'Done.' }]),
      tools: [asking('safe', asked)],
      store,
      sessionId: 's',
    });
    const { resumedRun } = await second.ready;
    const pending = await untilPending(second);
    second.resolveApproval('q1', { approved: true, arguments: { name: 'Ada' } }, { version: pending!.version });
    const result = await resumedRun!.result;
    const events = await store.loadEvents('s');

    expect(asked).toEqual(['q1', 'q1']);
    expect(questionEvents(events)).toEqual([
      'elicitationRequested',
      'elicitationResolved:cancel:interrupted by restart',
      'elicitationRequested',
      'elicitationResolved:accept:',
    ]);
    expect(events.find((e) => e.type === 'toolExecutionEnd')).toMatchObject({ result: 'hello Ada', isError: false });
    expect(checkInvariants(events, result.messages).violations).toEqual([]);
  });
});
