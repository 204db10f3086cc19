import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createAgent,
  defineTool,
  type AssistantMessage,
  type Message,
  type PostTurnContext,
  type PostTurnVerdict,
} from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, lifecycle } from '../support/harness.js';
import { ofType, toolResult, toolTrace } from './tools-fixtures.js';

/** Turn-policy scenarios P2, P3 and P5 (test/scenarios/README.md), driven through the public API. */

const USAGE = { input: 10, output: 5 };
const STREAM_HEAD = ['agentStart', 'turnStart', 'beforeModelCall', 'messageStart', 'messageUpdate+', 'messageEnd'];
const TEXT_TURN = ['turnStart', 'beforeModelCall', 'messageStart', 'messageUpdate+', 'messageEnd', 'turnEnd'];
const TOOL_TURN_THEN_TEXT = [
  ...STREAM_HEAD,
  'toolExecutionStart',
  'toolExecutionEnd',
  'turnEnd',
  ...TEXT_TURN,
  'agentEnd',
];
const REPLACEMENT_IGNORED = 'replacement ignored: it changes the tool-call blocks of the committed assistant message';

const echoed: Array<Record<string, unknown>> = [];
const echo = defineTool({
  name: 'echo',
  description: 'echoes x',
  parameters: z.object({ x: z.string() }),
  execute: (args) => (echoed.push(args), `echo ${args.x}`),
});

const user = (content: string): Message => ({ role: 'user', content });
const call = (id: string, name: string, args: Record<string, unknown> = {}) => ({
  type: 'toolCall' as const,
  id,
  name,
  arguments: args,
});
const text = (value: string) => ({ type: 'text' as const, text: value });
const assistant = (
  content: AssistantMessage['content'],
  stopReason: AssistantMessage['stopReason'],
  extra: Partial<AssistantMessage> = {},
): AssistantMessage => ({
  role: 'assistant',
  content,
  stopReason,
  model: 'scripted',
  usage: USAGE,
  ...extra,
});

/** A post-turn policy that records what it saw (a deep copy) and answers `verdict`. */
function recordingPolicy(
  seen: PostTurnContext[],
  verdict: (ctx: PostTurnContext) => PostTurnVerdict = () => ({ verdict: 'continue' }),
) {
  return (ctx: PostTurnContext): PostTurnVerdict => {
    seen.push(structuredClone(ctx));
    return verdict(ctx);
  };
}

const toolThenText = () =>
  scriptedModel([
    { text: 'Checking.', toolCalls: [{ id: 'c1', name: 'echo', arguments: { x: 'a' } }], usage: USAGE },
    { text: 'Done.', usage: USAGE },
  ]);
const TOOL_TURN = assistant([text('Checking.'), call('c1', 'echo', { x: 'a' })], 'toolUse');
const ECHO_RESULT = toolResult('c1', 'echo', 'echo a');
const DONE = assistant([text('Done.')], 'stop');

describe('P2 post-turn policies see the committed turn', () => {
  it('P2 post-turn policies see the committed turn: text turn', async () => {
    const seen: PostTurnContext[] = [];
    const model = scriptedModel([{ text: 'Hello there.', usage: USAGE }]);
    const agent = createAgent({ model, policies: { postTurn: [recordingPolicy(seen)] }, retry: { jitter: false } });
    const { result, events } = await finished(agent.prompt('hi'));

    expect(lifecycle(events)).toEqual([...STREAM_HEAD, 'turnEnd', 'agentEnd']);
    const reply = assistant([text('Hello there.')], 'stop');
    expect(seen).toEqual([
      {
        messages: [user('hi'), reply],
        assistant: reply,
        toolResults: [],
        turnIndex: 0,
        counters: expect.objectContaining({ modelCalls: 1, tokensIn: 10, tokensOut: 5 }),
      },
    ]);
    expect(ofType(events, 'turnEnd').map((e) => [e.reason, e.assistant])).toEqual([['complete', reply]]);
    expect([result.status, result.endReason]).toEqual(['completed', 'naturalEnd']);
    expect(result.messages).toEqual([user('hi'), reply]);
    expect(model.calls).toBe(1);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, modelCalls: 1, tokensIn: 10, tokensOut: 5 });
  });

  it('P2 post-turn policies see the committed turn: tool turn (assistant and results committed before the policy runs)', async () => {
    const seen: PostTurnContext[] = [];
    const model = toolThenText();
    const agent = createAgent({
      model,
      tools: [echo],
      policies: { postTurn: [recordingPolicy(seen)] },
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual(TOOL_TURN_THEN_TEXT);
    expect(seen.map(({ counters: _counters, ...rest }) => rest)).toEqual([
      {
        messages: [user('go'), TOOL_TURN, ECHO_RESULT],
        assistant: TOOL_TURN,
        toolResults: [ECHO_RESULT],
        turnIndex: 0,
      },
      { messages: [user('go'), TOOL_TURN, ECHO_RESULT, DONE], assistant: DONE, toolResults: [], turnIndex: 1 },
    ]);
    expect(seen.map((ctx) => ctx.counters.modelCalls)).toEqual([1, 2]);
    expect(ofType(events, 'turnEnd').map((e) => [e.reason, e.toolResults])).toEqual([
      ['toolsExecuted', [ECHO_RESULT]],
      ['complete', []],
    ]);
    expect(result.messages).toEqual([user('go'), TOOL_TURN, ECHO_RESULT, DONE]);
    expect(model.calls).toBe(2);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });

  it('P2 post-turn policies see the committed turn: error turn', async () => {
    const seen: PostTurnContext[] = [];
    const model = scriptedModel([{ text: 'Part', usage: USAGE, error: { kind: 'auth', message: 'bad key' } }]);
    const agent = createAgent({ model, policies: { postTurn: [recordingPolicy(seen)] }, retry: { jitter: false } });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([...STREAM_HEAD, 'turnEnd', 'agentEnd']);
    const failed = assistant([text('Part')], 'error', { errorMessage: 'bad key' });
    expect(seen.map(({ counters: _counters, ...rest }) => rest)).toEqual([
      { messages: [user('go'), failed], assistant: failed, toolResults: [], turnIndex: 0 },
    ]);
    expect(ofType(events, 'messageEnd').map((e) => e.message)).toEqual([failed]);
    expect(ofType(events, 'turnEnd').map((e) => [e.reason, e.assistant])).toEqual([['error', failed]]);
    expect([result.status, result.endReason, result.error]).toEqual([
      'failed',
      'fatalError',
      { code: 'auth', message: 'bad key' },
    ]);
    expect(result.messages).toEqual([user('go'), failed]);
    expect(model.calls).toBe(1);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 1,
      turnsFailed: 1,
      modelCalls: 1,
      tokensIn: 10,
      tokensOut: 5,
      failureCodes: { auth: 1 },
    });
  });

  it('P2 post-turn Stop on a text turn ⇒ turnEnd, then agentEnd(policyStop); post-loop not run; follow-ups not polled', async () => {
    let postLoopRuns = 0;
    const model = scriptedModel([{ text: 'Answer.', usage: USAGE }]);
    const agent = createAgent({
      model,
      policies: {
        postTurn: [() => ({ verdict: 'stop', reason: 'enough' })],
        postLoop: [() => (postLoopRuns++, { verdict: 'continue' })],
      },
      retry: { jitter: false },
    });
    const run = agent.prompt('go');
    const followUp = agent.followUp('and then this');
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual([...STREAM_HEAD, 'turnEnd', 'agentEnd']);
    const reply = assistant([text('Answer.')], 'stop');
    expect(ofType(events, 'turnEnd').map((e) => [e.reason, e.assistant])).toEqual([['complete', reply]]);
    expect([result.status, result.endReason]).toEqual(['completed', 'policyStop']);
    expect(postLoopRuns).toBe(0);
    expect(await followUp).toEqual({ status: 'stillQueued' });
    expect(agent.snapshot().followUpQueue).toEqual([user('and then this')]);
    expect(result.messages).toEqual([user('go'), reply]);
    expect(model.calls).toBe(1);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, modelCalls: 1, tokensIn: 10, tokensOut: 5 });
  });

  it('P2 post-turn Stop on a tool turn ⇒ the results are committed, turnEnd, agentEnd(policyStop), no further model call', async () => {
    let postLoopRuns = 0;
    const model = toolThenText();
    const agent = createAgent({
      model,
      tools: [echo],
      policies: {
        postTurn: [() => ({ verdict: 'stop', reason: 'enough' })],
        postLoop: [() => (postLoopRuns++, { verdict: 'continue' })],
      },
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...STREAM_HEAD,
      'toolExecutionStart',
      'toolExecutionEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(ofType(events, 'turnEnd').map((e) => [e.reason, e.assistant, e.toolResults])).toEqual([
      ['toolsExecuted', TOOL_TURN, [ECHO_RESULT]],
    ]);
    expect([result.status, result.endReason, postLoopRuns, model.calls]).toEqual(['completed', 'policyStop', 0, 1]);
    expect(result.messages).toEqual([user('go'), TOOL_TURN, ECHO_RESULT]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 1,
      modelCalls: 1,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      tokensIn: 10,
      tokensOut: 5,
    });
  });
});

describe('P3 post-turn replacement of the assistant message', () => {
  it('P3 post-turn replacement with the same tool-call blocks ⇒ used: committed, in turnEnd and in the next model call', async () => {
    const rewritten = assistant([text('Rewritten.'), call('c1', 'echo', { x: 'a' })], 'toolUse');
    const model = toolThenText();
    const agent = createAgent({
      model,
      tools: [echo],
      policies: {
        postTurn: [
          (ctx) => (ctx.turnIndex === 0 ? { verdict: 'replace', assistant: rewritten } : { verdict: 'continue' }),
        ],
      },
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual(TOOL_TURN_THEN_TEXT);
    // The stream already showed the original; the committed turn carries the replacement.
    expect(ofType(events, 'messageEnd').map((e) => e.message)).toEqual([TOOL_TURN, DONE]);
    expect(ofType(events, 'turnEnd').map((e) => [e.reason, e.assistant, e.toolResults])).toEqual([
      ['toolsExecuted', rewritten, [ECHO_RESULT]],
      ['complete', DONE, []],
    ]);
    expect(model.requests[1]?.messages).toEqual([user('go'), rewritten, ECHO_RESULT]);
    expect(result.messages).toEqual([user('go'), rewritten, ECHO_RESULT, DONE]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });

  it('P3 post-turn replacement of a text turn (no tool-call blocks on either side) ⇒ used', async () => {
    const rewritten = assistant([text('Polished answer.')], 'stop');
    const model = scriptedModel([{ text: 'Rough answer.', usage: USAGE }]);
    const agent = createAgent({
      model,
      policies: { postTurn: [() => ({ verdict: 'replace', assistant: rewritten })] },
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([...STREAM_HEAD, 'turnEnd', 'agentEnd']);
    expect(ofType(events, 'messageEnd').map((e) => e.message)).toEqual([assistant([text('Rough answer.')], 'stop')]);
    expect(ofType(events, 'turnEnd').map((e) => [e.reason, e.assistant])).toEqual([['complete', rewritten]]);
    expect([result.status, result.endReason]).toEqual(['completed', 'naturalEnd']);
    expect(result.messages).toEqual([user('go'), rewritten]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, modelCalls: 1, tokensIn: 10, tokensOut: 5 });
  });

  it.each([
    ['adds a tool-call block', [text('Checking.'), call('c1', 'echo', { x: 'a' }), call('c9', 'echo', { x: 'b' })]],
    ['removes the tool-call block (text only)', [text('Rewritten.')]],
    ["changes a tool call's arguments", [text('Checking.'), call('c1', 'echo', { x: 'changed' })]],
  ])(
    'P3 post-turn replacement that %s ⇒ ignored and reported; the original stays committed',
    async (_label, content) => {
      const model = toolThenText();
      const agent = createAgent({
        model,
        tools: [echo],
        policies: {
          postTurn: [
            (ctx) =>
              ctx.turnIndex === 0
                ? { verdict: 'replace', assistant: assistant(content, 'toolUse') }
                : { verdict: 'continue' },
          ],
        },
        retry: { jitter: false },
      });
      const { result, events } = await finished(agent.prompt('go'));

      expect(lifecycle(events)).toEqual([
        ...STREAM_HEAD,
        'toolExecutionStart',
        'toolExecutionEnd',
        'policyError',
        'turnEnd',
        ...TEXT_TURN,
        'agentEnd',
      ]);
      expect(ofType(events, 'policyError').map((e) => [e.slot, e.message, e.turnIndex])).toEqual([
        ['postTurn', REPLACEMENT_IGNORED, 0],
      ]);
      expect(ofType(events, 'turnEnd').map((e) => [e.reason, e.assistant, e.toolResults])).toEqual([
        ['toolsExecuted', TOOL_TURN, [ECHO_RESULT]],
        ['complete', DONE, []],
      ]);
      expect(model.requests[1]?.messages).toEqual([user('go'), TOOL_TURN, ECHO_RESULT]);
      expect(result.messages).toEqual([user('go'), TOOL_TURN, ECHO_RESULT, DONE]);
      expectInvariants(events, result.messages);
      expectCounters(result.counters, {
        turns: 2,
        modelCalls: 2,
        toolCallsRequested: 1,
        toolCallsExecuted: 1,
        tokensIn: 20,
        tokensOut: 10,
      });
    },
  );
});

describe.each([
  [
    'throws',
    (message: string) => () => {
      throw new Error(message);
    },
  ],
  ['rejects', (message: string) => () => Promise.reject(new Error(message))],
] as const)('P5 a policy of every slot that %s', (mode, failing) => {
  it(`P5 a throwing policy of any slot never crashes the run (${mode}): each counts as Continue and is reported`, async () => {
    echoed.length = 0;
    const guarded = defineTool({
      name: 'guarded',
      description: 'needs approval',
      parameters: z.object({}),
      requiresApproval: true,
      execute: () => 'ran',
    });
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'c1', name: 'echo', arguments: { x: 'a' } },
          { id: 'c2', name: 'guarded' },
        ],
        usage: USAGE,
      },
      { text: 'Done.', usage: USAGE },
    ]);
    // The policy after each failing one still runs: a failure counts as Continue.
    const later: string[] = [];
    const preDispatchSaw: Array<Record<string, unknown>> = [];
    const agent = createAgent({
      model,
      tools: [echo, guarded],
      approval: failing('approval boom'),
      policies: {
        preTurn: [failing('preTurn boom'), (ctx) => (later.push(`preTurn:${ctx.turnIndex}`), { verdict: 'continue' })],
        preDispatch: [
          (ctx) => {
            // Its argument changes are rolled back when it fails.
            ctx.toolCall.arguments.x = 'mutated';
            return failing('preDispatch boom')();
          },
          (ctx) => (preDispatchSaw.push(ctx.toolCall.arguments), { verdict: 'continue' }),
        ],
        postTurn: [
          failing('postTurn boom'),
          (ctx) => (later.push(`postTurn:${ctx.turnIndex}`), { verdict: 'continue' }),
        ],
        postLoop: [failing('postLoop boom'), () => (later.push('postLoop'), { verdict: 'continue' })],
      },
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'policyError',
      ...STREAM_HEAD.slice(1),
      'policyError',
      'policyError',
      'toolApprovalRequested',
      'policyError',
      'toolApprovalResolved',
      'toolExecutionStart',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'policyError',
      'turnEnd',
      'policyError',
      ...TEXT_TURN.slice(0, -1),
      'policyError',
      'turnEnd',
      'policyError',
      'agentEnd',
    ]);
    expect(ofType(events, 'policyError').map((e) => [e.slot, e.message, e.turnIndex])).toEqual([
      ['preTurn', 'preTurn boom', undefined],
      ['preDispatch', 'preDispatch boom', 0],
      ['preDispatch', 'preDispatch boom', 0],
      ['approval', 'approval boom', 0],
      ['postTurn', 'postTurn boom', 0],
      ['preTurn', 'preTurn boom', undefined],
      ['postTurn', 'postTurn boom', 1],
      ['postLoop', 'postLoop boom', undefined],
    ]);
    expect(toolTrace(events)).toEqual(['ask:c2', 'denied:c2', 'start:c1', 'end:c1', 'end:c2!']);
    expect(later).toEqual(['preTurn:0', 'postTurn:0', 'preTurn:1', 'postTurn:1', 'postLoop']);
    expect(preDispatchSaw).toEqual([{ x: 'a' }, {}]);
    expect(echoed).toEqual([{ x: 'a' }]);
    const toolTurn = assistant([call('c1', 'echo', { x: 'a' }), call('c2', 'guarded')], 'toolUse');
    const results = [ECHO_RESULT, toolResult('c2', 'guarded', 'approval failed: approval boom', true)];
    expect(ofType(events, 'turnEnd').map((e) => [e.reason, e.toolResults])).toEqual([
      ['toolsExecuted', results],
      ['complete', []],
    ]);
    expect([result.status, result.endReason]).toEqual(['completed', 'naturalEnd']);
    expect(result.messages).toEqual([user('go'), toolTurn, ...results, DONE]);
    expect(model.calls).toBe(2);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 1,
      toolCallsRejected: 1,
      approvalsRequested: 1,
      approvalsDenied: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });
});
