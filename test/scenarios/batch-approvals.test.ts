import { describe, expect, it } from 'vitest';
import { createAgent, type ApprovalDecision, type ApprovalRequest } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { deferred, expectCounters, expectInvariants, finished, settle } from '../support/harness.js';
import { idTool, toolTrace, USAGE } from './tools-fixtures.js';

/**
 * A batch whose calls need approval is asked together: the handler is called for every call at once
 * (in call order), its answers come in any order, each call is decided as its answer comes, and the
 * batch runs after the last one. Calls that need no approval wait for the batch's decisions.
 */

function batchAgent() {
  const ran: string[] = [];
  const asked: Array<ApprovalRequest & { answer(decision: ApprovalDecision): void; signal: AbortSignal }> = [];
  const run = (name: string) => (args: { id: string }) => (ran.push(`${name}:${args.id}`), `${name} ${args.id}`);
  const agent = createAgent({
    model: scriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'deploy', arguments: { id: 'eu' } },
          { id: 'r', name: 'read', arguments: { id: 'log' } },
          { id: 'b', name: 'deploy', arguments: { id: 'us' } },
          { id: 'c', name: 'deploy', arguments: { id: 'ap' } },
        ],
        usage: USAGE,
      },
      { text: 'Done.', usage: USAGE },
    ]),
    tools: [idTool('deploy', run('deploy'), { requiresApproval: true }), idTool('read', run('read'))],
    approval: (request, { signal }) => {
      const answer = deferred<ApprovalDecision>();
      asked.push({ ...request, answer: answer.resolve, signal });
      return answer.promise;
    },
  });
  const answer = (id: string, decision: ApprovalDecision) => asked.find((r) => r.toolCallId === id)?.answer(decision);
  return { agent, ran, asked, answer };
}

describe('a batch of approvals asked together (handler)', () => {
  it('three calls asked at once, answered c, a, b (b denied): each decided as answered; the batch runs after the last', async () => {
    const { agent, ran, asked, answer } = batchAgent();
    const run = agent.prompt('Deploy everywhere.');
    await settle();
    // Every call that needs approval is asked before any answer, in call order; the read waits with them.
    expect(asked.map((request) => [request.toolCallId, request.arguments])).toEqual([
      ['a', { id: 'eu' }],
      ['b', { id: 'us' }],
      ['c', { id: 'ap' }],
    ]);
    expect(ran).toEqual([]);
    answer('c', { approved: true });
    await settle();
    answer('a', { approved: true });
    await settle();
    expect(ran).toEqual([]);
    answer('b', { approved: false, reason: 'not the US today' });
    const { result, events } = await finished(run);

    expect(toolTrace(events)).toEqual([
      'ask:a',
      'ask:b',
      'ask:c',
      'approved:c',
      'approved:a',
      'denied:b',
      'start:a',
      'start:r',
      'start:c',
      'end:a',
      'end:r',
      'end:c',
      'end:b!',
    ]);
    expect(ran).toEqual(['deploy:eu', 'read:log', 'deploy:ap']);
    const results = result.messages.flatMap((m) => (m.role === 'toolResult' ? [[m.toolCallId, m.content]] : []));
    expect(results).toEqual([
      ['a', 'deploy eu'],
      ['r', 'read log'],
      ['b', 'rejected: not the US today'],
      ['c', 'deploy ap'],
    ]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 4,
      toolCallsExecuted: 3,
      toolCallsRejected: 1,
      approvalsRequested: 3,
      approvalsDenied: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });

  it('abort after one of three answers: the two still asked are withdrawn, their handlers signalled, every call answered', async () => {
    const { agent, ran, asked, answer } = batchAgent();
    const run = agent.prompt('Deploy everywhere.');
    await settle();
    answer('b', { approved: true });
    await settle();
    agent.abort('the user left');
    const { result, events } = await finished(run);

    expect(toolTrace(events)).toEqual([
      'ask:a',
      'ask:b',
      'ask:c',
      'approved:b',
      'denied:a',
      'denied:c',
      'end:a!',
      'end:r!',
      'end:b!',
      'end:c!',
    ]);
    expect(asked.map((request) => [request.toolCallId, request.signal.aborted])).toEqual([
      ['a', true],
      ['b', true],
      ['c', true],
    ]);
    expect(ran).toEqual([]);
    expect(result).toMatchObject({ status: 'aborted', endReason: 'aborted', error: { message: 'the user left' } });
    expect(result.messages.filter((m) => m.role === 'toolResult')).toHaveLength(4);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 1,
      modelCalls: 1,
      toolCallsRequested: 4,
      approvalsRequested: 3,
      approvalsDenied: 2,
      tokensIn: 10,
      tokensOut: 5,
    });
  });

  it('a handler that answers at once for each call: one verdict per call, in call order', async () => {
    const seen: string[] = [];
    const agent = createAgent({
      model: scriptedModel([
        {
          toolCalls: ['x', 'y', 'z'].map((id) => ({ id, name: 'deploy', arguments: { id } })),
        },
        { text: 'Done.' },
      ]),
      tools: [idTool('deploy', (args) => `deployed ${args.id}`, { requiresApproval: true })],
      approval: ({ toolCallId }): ApprovalDecision => (
        seen.push(toolCallId),
        toolCallId === 'y' ? { approved: false } : { approved: true }
      ),
    });
    const { result, events } = await finished(agent.prompt('go'));
    expect(seen).toEqual(['x', 'y', 'z']);
    expect(toolTrace(events).slice(0, 6)).toEqual(['ask:x', 'ask:y', 'ask:z', 'approved:x', 'denied:y', 'approved:z']);
    expectInvariants(events, result.messages);
    expect(result.counters).toMatchObject({ approvalsRequested: 3, approvalsDenied: 1, toolCallsExecuted: 2 });
  });
});
