import { describe, expect, it } from 'vitest';
import { createAgent, type ApprovalDecision, type ApprovalRequest, type PreDispatchContext } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, lifecycle } from '../support/harness.js';
import { idTool, ofType, TEXT_TURN, TOOL_TURN_HEAD, toolResult, toolTrace, USAGE } from './tools-fixtures.js';

/** Two calls of one turn, then a text answer. */
function twoCallScript(first: string, second: string) {
  return scriptedModel([
    {
      toolCalls: [
        { id: 'a', name: first, arguments: { id: 'x' } },
        { id: 'b', name: second, arguments: { id: 'y' } },
      ],
      usage: USAGE,
    },
    { text: 'Done.', usage: USAGE },
  ]);
}

describe('T3 approval modes', () => {
  it("T3 approval 'always': requested → resolved → start → end per call, the batch's requests together; a rejected call gets resolved(false) and an error result, no start", async () => {
    const ran: string[] = [];
    const echo = idTool('echo', (args) => {
      ran.push(args.id);
      return `echo ${args.id}`;
    });
    const asked: ApprovalRequest[] = [];
    const model = twoCallScript('echo', 'echo');
    const agent = createAgent({
      model,
      tools: [echo],
      approvalMode: 'always',
      approval: (request): ApprovalDecision => {
        asked.push(request);
        return request.toolCallId === 'a' ? { approved: true } : { approved: false };
      },
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolApprovalRequested',
      'toolApprovalRequested',
      'toolApprovalResolved',
      'toolApprovalResolved',
      'toolExecutionStart',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    // Both calls are asked at once (in call order); each is decided as its answer comes.
    expect(toolTrace(events)).toEqual(['ask:a', 'ask:b', 'approved:a', 'denied:b', 'start:a', 'end:a', 'end:b!']);
    expect(asked).toEqual([
      { toolCallId: 'a', toolName: 'echo', arguments: { id: 'x' }, turnIndex: 0 },
      { toolCallId: 'b', toolName: 'echo', arguments: { id: 'y' }, turnIndex: 0 },
    ]);
    expect(ofType(events, 'toolApprovalRequested').map((e) => [e.toolCallId, e.toolName, e.arguments])).toEqual([
      ['a', 'echo', { id: 'x' }],
      ['b', 'echo', { id: 'y' }],
    ]);
    expect(ran).toEqual(['x']);
    const results = [
      toolResult('a', 'echo', 'echo x'),
      toolResult('b', 'echo', 'rejected: the user declined this tool call', true),
    ];
    expect(ofType(events, 'turnEnd')[0]?.toolResults).toEqual(results);
    expect(model.requests[1]?.messages.slice(2)).toEqual(results);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 1,
      toolCallsRejected: 1,
      approvalsRequested: 2,
      approvalsDenied: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });

  it('T3 a rejection with a reason puts the reason in the result', async () => {
    const model = twoCallScript('echo', 'echo');
    const agent = createAgent({
      model,
      tools: [idTool('echo', (args) => `echo ${args.id}`)],
      approvalMode: 'always',
      approval: () => ({ approved: false, reason: 'not on weekends' }),
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolApprovalRequested',
      'toolApprovalRequested',
      'toolApprovalResolved',
      'toolApprovalResolved',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['ask:a', 'ask:b', 'denied:a', 'denied:b', 'end:a!', 'end:b!']);
    expect(ofType(events, 'toolExecutionEnd').map((e) => e.result)).toEqual([
      'rejected: not on weekends',
      'rejected: not on weekends',
    ]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsRejected: 2,
      approvalsRequested: 2,
      approvalsDenied: 2,
      tokensIn: 20,
      tokensOut: 10,
    });
  });

  it("T3 approval 'smart' (the default) asks only for tools marked requiresApproval", async () => {
    const asked: string[] = [];
    const model = twoCallScript('safe', 'risky');
    const agent = createAgent({
      model,
      tools: [idTool('safe', () => 'safe ok'), idTool('risky', () => 'risky ok', { requiresApproval: true })],
      approval: (request) => {
        asked.push(request.toolName);
        return { approved: true };
      },
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolApprovalRequested',
      'toolApprovalResolved',
      'toolExecutionStart',
      'toolExecutionStart',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['ask:b', 'approved:b', 'start:a', 'start:b', 'end:a', 'end:b']);
    expect(asked).toEqual(['risky']);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      approvalsRequested: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });

  it("T3 approval 'bypass' never asks, even for tools marked requiresApproval", async () => {
    let asked = 0;
    const model = twoCallScript('risky', 'risky');
    const agent = createAgent({
      model,
      tools: [idTool('risky', (args) => `risky ${args.id}`, { requiresApproval: true })],
      approvalMode: 'bypass',
      approval: () => {
        asked++;
        return { approved: false };
      },
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolExecutionStart',
      'toolExecutionStart',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['start:a', 'start:b', 'end:a', 'end:b']);
    expect(asked).toBe(0);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      tokensIn: 20,
      tokensOut: 10,
    });
  });
  it("T3 approval 'always' asks only for calls that cleared preprocessing: an unknown tool gets its error without a request", async () => {
    const asked: string[] = [];
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'u', name: 'nope', arguments: {} },
          { id: 'a', name: 'echo', arguments: { id: 'x' } },
        ],
        usage: USAGE,
      },
      { text: 'Done.', usage: USAGE },
    ]);
    const agent = createAgent({
      model,
      tools: [idTool('echo', (args) => `echo ${args.id}`)],
      approvalMode: 'always',
      approval: (request) => (asked.push(request.toolCallId), { approved: true }),
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolApprovalRequested',
      'toolApprovalResolved',
      'toolExecutionStart',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['ask:a', 'approved:a', 'start:a', 'end:a', 'end:u!']);
    expect(asked).toEqual(['a']);
    expect(model.requests[1]?.messages.slice(2)).toEqual([
      toolResult('u', 'nope', 'Unknown tool "nope". Available tools: echo.', true),
      toolResult('a', 'echo', 'echo x'),
    ]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 1,
      toolCallsInvalid: 1,
      approvalsRequested: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });
});

describe('T4 approveWith(newArgs)', () => {
  it('T4 the tool runs with the approved arguments, and pre-dispatch runs again on them (only for that call)', async () => {
    const ran: string[] = [];
    const policySaw: string[] = [];
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'write', arguments: { id: 'draft' } },
          { id: 'b', name: 'echo', arguments: { id: 'hi' } },
        ],
        usage: USAGE,
      },
      { text: 'Written.', usage: USAGE },
    ]);
    const agent = createAgent({
      model,
      tools: [
        idTool('write', (args) => (ran.push(args.id), `wrote ${args.id}`), { requiresApproval: true }),
        idTool('echo', (args) => `echo ${args.id}`),
      ],
      approval: () => ({ approved: true, arguments: { id: 'final' } }),
      policies: {
        preDispatch: [
          (ctx: PreDispatchContext) => {
            policySaw.push(String(ctx.toolCall.arguments.id));
            return { verdict: 'continue' };
          },
        ],
      },
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolApprovalRequested',
      'toolApprovalResolved',
      'toolExecutionStart',
      'toolExecutionStart',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['ask:a', 'approved:a', 'start:a', 'start:b', 'end:a', 'end:b']);
    expect(policySaw).toEqual(['draft', 'hi', 'final']);
    expect(ran).toEqual(['final']);
    expect(ofType(events, 'toolApprovalRequested')[0]?.arguments).toEqual({ id: 'draft' });
    expect(ofType(events, 'toolExecutionStart').map((e) => e.arguments)).toEqual([{ id: 'final' }, { id: 'hi' }]);
    expect(model.requests[1]?.messages.slice(2)).toEqual([
      toolResult('a', 'write', 'wrote final'),
      toolResult('b', 'echo', 'echo hi'),
    ]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      approvalsRequested: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });

  it('T4 pre-dispatch may Skip the call on its approved arguments: no start, a skipped result', async () => {
    let ran = 0;
    const model = scriptedModel([
      { toolCalls: [{ id: 'a', name: 'write', arguments: { id: 'draft' } }], usage: USAGE },
      { text: 'Skipped then.', usage: USAGE },
    ]);
    const agent = createAgent({
      model,
      tools: [idTool('write', () => (ran++, 'wrote'), { requiresApproval: true })],
      approval: () => ({ approved: true, arguments: { id: '/etc/passwd' } }),
      policies: {
        preDispatch: [
          (ctx) =>
            String(ctx.toolCall.arguments.id).startsWith('/etc')
              ? { verdict: 'skip', reason: 'system files are off limits' }
              : { verdict: 'continue' },
        ],
      },
      retry: { jitter: false },
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolApprovalRequested',
      'toolApprovalResolved',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['ask:a', 'approved:a', 'end:a!']);
    expect(ran).toBe(0);
    expect(model.requests[1]?.messages.slice(2)).toEqual([
      toolResult('a', 'write', 'skipped: system files are off limits', true),
    ]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 1,
      toolCallsRejected: 1,
      approvalsRequested: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });
});

describe('T5 approval callback throws', () => {
  for (const variant of ['sync', 'async'] as const) {
    it(`T5 an approval callback that throws (${variant}) resolves false with "approval failed: …"; the tool does not run; the loop continues`, async () => {
      let ran = 0;
      const model = scriptedModel([
        { toolCalls: [{ id: 'a', name: 'deploy', arguments: { id: 'prod' } }], usage: USAGE },
        { text: 'Could not deploy.', usage: USAGE },
      ]);
      const agent = createAgent({
        model,
        tools: [idTool('deploy', () => (ran++, 'deployed'), { requiresApproval: true })],
        approval:
          variant === 'sync'
            ? () => {
                throw new Error('approval service down');
              }
            : () => Promise.reject(new Error('approval service down')),
        retry: { jitter: false },
      });
      const { result, events } = await finished(agent.prompt('go'));

      expect(lifecycle(events)).toEqual([
        ...TOOL_TURN_HEAD,
        'toolApprovalRequested',
        'policyError',
        'toolApprovalResolved',
        'toolExecutionEnd',
        'turnEnd',
        ...TEXT_TURN,
        'agentEnd',
      ]);
      expect(toolTrace(events)).toEqual(['ask:a', 'denied:a', 'end:a!']);
      expect(ofType(events, 'policyError').map((e) => [e.slot, e.message, e.turnIndex])).toEqual([
        ['approval', 'approval service down', 0],
      ]);
      expect(ran).toBe(0);
      const failed = toolResult('a', 'deploy', 'approval failed: approval service down', true);
      expect(ofType(events, 'turnEnd')[0]?.toolResults).toEqual([failed]);
      expect(model.requests[1]?.messages.slice(2)).toEqual([failed]);
      expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
      expectInvariants(events, result.messages);
      expectCounters(result.counters, {
        turns: 2,
        modelCalls: 2,
        toolCallsRequested: 1,
        toolCallsRejected: 1,
        approvalsRequested: 1,
        approvalsDenied: 1,
        tokensIn: 20,
        tokensOut: 10,
      });
    });
  }
});
