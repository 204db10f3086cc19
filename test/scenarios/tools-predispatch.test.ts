import { describe, expect, it } from 'vitest';
import { createAgent, type PreDispatchPolicy } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, lifecycle } from '../support/harness.js';
import { idTool, ofType, readTool, TEXT_TURN, TOOL_TURN_HEAD, toolResult, toolTrace, USAGE } from './tools-fixtures.js';

describe('T6 pre-dispatch Stop', () => {
  it('T6 pre-dispatch Stop on call 2 of 2: no approval, no start, both calls "stopped before dispatch" in call order, turnEnd(stopped), agentEnd, no further model call', async () => {
    let asked = 0;
    let ran = 0;
    const seen: string[] = [];
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'rm', arguments: { id: 'tmp' } },
          { id: 'b', name: 'rm', arguments: { id: 'home' } },
        ],
        usage: USAGE,
      },
    ]);
    const agent = createAgent({
      model,
      tools: [idTool('rm', () => (ran++, 'removed'))],
      approvalMode: 'always',
      approval: () => (asked++, { approved: true }),
      policies: {
        preDispatch: [
          (ctx) => {
            seen.push(ctx.toolCall.id);
            return ctx.toolCall.arguments.id === 'home'
              ? { verdict: 'stop', reason: 'refusing to touch home' }
              : { verdict: 'continue' };
          },
        ],
      },
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['end:a!', 'end:b!']);
    expect(seen).toEqual(['a', 'b']);
    expect(asked).toBe(0);
    expect(ran).toBe(0);
    const stopped = ['a', 'b'].map((id) =>
      toolResult(id, 'rm', 'stopped before dispatch: refusing to touch home', true),
    );
    const [turnEnd] = ofType(events, 'turnEnd');
    expect(turnEnd?.reason).toBe('stopped');
    expect(turnEnd?.toolResults).toEqual(stopped);
    expect(result.messages.slice(2)).toEqual(stopped);
    expect(ofType(events, 'agentEnd').map((e) => [e.status, e.endReason])).toEqual([['completed', 'policyStop']]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'policyStop' });
    expect(model.calls).toBe(1);
    expect(model.overruns).toEqual([]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, modelCalls: 1, toolCallsRequested: 2, tokensIn: 10, tokensOut: 5 });
  });

  it('T6 a call resolved before the Stop (unknown tool) keeps its own error; the unresolved ones are stopped', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'u', name: 'nope', arguments: {} },
          { id: 'a', name: 'rm', arguments: { id: 'tmp' } },
          { id: 'b', name: 'rm', arguments: { id: 'home' } },
        ],
        usage: USAGE,
      },
    ]);
    const agent = createAgent({
      model,
      tools: [idTool('rm', () => 'removed')],
      policies: {
        preDispatch: [
          (ctx) => (ctx.toolCall.id === 'b' ? { verdict: 'stop', reason: 'halt' } : { verdict: 'continue' }),
        ],
      },
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolExecutionEnd',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(ofType(events, 'turnEnd')[0]?.toolResults).toEqual([
      toolResult('u', 'nope', 'Unknown tool "nope". Available tools: rm.', true),
      toolResult('a', 'rm', 'stopped before dispatch: halt', true),
      toolResult('b', 'rm', 'stopped before dispatch: halt', true),
    ]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'policyStop' });
    expect(model.calls).toBe(1);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 1,
      modelCalls: 1,
      toolCallsRequested: 3,
      toolCallsInvalid: 1,
      tokensIn: 10,
      tokensOut: 5,
    });
  });
});

describe('T7 pre-dispatch Inject and a throwing pre-dispatch policy', () => {
  it('T7 pre-dispatch Inject: the injected message is in the next model call', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'a', name: 'echo', arguments: { id: 'x' } }], usage: USAGE },
      { text: 'Noted.', usage: USAGE },
    ]);
    const agent = createAgent({
      model,
      tools: [idTool('echo', (args) => `echo ${args.id}`)],
      policies: { preDispatch: [() => ({ verdict: 'inject', messages: ['Reminder: echo is rate limited.'] })] },
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolExecutionStart',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['start:a', 'end:a']);
    // Not sent with the call that produced the batch; sent with the next one, after the results.
    expect(model.requests[0]?.messages).toEqual([{ role: 'user', content: 'go' }]);
    expect(model.requests[1]?.messages.slice(2)).toEqual([
      toolResult('a', 'echo', 'echo x'),
      { role: 'user', content: 'Reminder: echo is rate limited.' },
    ]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
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

  for (const variant of ['throws', 'rejects'] as const) {
    it(`T7 a pre-dispatch policy that ${variant} counts as Continue, is reported, and its argument changes are rolled back`, async () => {
      const ran: unknown[] = [];
      const nextPolicySaw: unknown[] = [];
      const vandal: PreDispatchPolicy = (ctx) => {
        ctx.toolCall.arguments.path = 'evil.txt';
        (ctx.toolCall.arguments.options as { limit: number }).limit = 999;
        if (variant === 'throws') throw new Error('policy bug');
        return Promise.reject(new Error('policy bug'));
      };
      const model = scriptedModel([
        { toolCalls: [{ id: 'a', name: 'read', arguments: { path: 'a.txt', options: { limit: 3 } } }], usage: USAGE },
        { text: 'Read it.', usage: USAGE },
      ]);
      const agent = createAgent({
        model,
        tools: [readTool((args) => (ran.push(args), `read ${args.path}`))],
        policies: {
          preDispatch: [
            vandal,
            (ctx) => (nextPolicySaw.push(structuredClone(ctx.toolCall.arguments)), { verdict: 'continue' }),
          ],
        },
        retry: { jitter: false },
      });
      const { result, events } = await finished(agent.prompt('go'));

      expect(lifecycle(events)).toEqual([
        ...TOOL_TURN_HEAD,
        'policyError',
        'toolExecutionStart',
        'toolExecutionEnd',
        'turnEnd',
        ...TEXT_TURN,
        'agentEnd',
      ]);
      expect(ofType(events, 'policyError').map((e) => [e.slot, e.message, e.turnIndex])).toEqual([
        ['preDispatch', 'policy bug', 0],
      ]);
      const original = { path: 'a.txt', options: { limit: 3 } };
      expect(nextPolicySaw).toEqual([original]);
      expect(ran).toEqual([original]);
      expect(ofType(events, 'toolExecutionStart')[0]?.arguments).toEqual(original);
      expect(model.requests[1]?.messages.slice(2)).toEqual([toolResult('a', 'read', 'read a.txt')]);
      expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
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
  }
});
