import { describe, expect, test } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { checkToolParity, createAgent, defineTool } from 'agentchart';
import type { Agent, SteerReceipt } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { deferred, expectCounters, expectInvariants, finished, lifecycle, ofType, settle } from '../support/harness.js';
import {
  ABORTED_RESULT,
  called,
  readResult,
  readTool,
  said,
  TEXT_TURN,
  toolResult,
  turnEnds,
  user,
} from './session-fixtures.js';

// Scenarios C6 (a steering message is never lost to an abort) and C7 (after any abort, the next
// model call gets a history that satisfies parity).

/** A tool that starts, tells the test, and never finishes on its own (it ignores its signal). */
function stuckTool(name: string, options: { requiresApproval?: boolean } = {}) {
  const started = deferred();
  const release = deferred<string>();
  const tool = defineTool({
    name,
    description: `${name} (never finishes by itself)`,
    parameters: z.object({}),
    ...options,
    execute: () => {
      started.resolve();
      return release.promise;
    },
  });
  return { tool, started: started.promise, release: () => release.resolve('too late') };
}

/** Pre-turn policy that blocks the turn with the given index until released; records what it saw. */
function blockingPreTurn(blockedTurn: number) {
  const reached = deferred();
  const gate = deferred();
  const seen: Array<{ turnIndex: number; newMessages: unknown[] }> = [];
  const policy = async (ctx: { turnIndex: number; newMessages: readonly unknown[] }) => {
    seen.push({ turnIndex: ctx.turnIndex, newMessages: [...ctx.newMessages] });
    if (ctx.turnIndex === blockedTurn && seen.filter((s) => s.turnIndex === blockedTurn).length === 1) {
      reached.resolve();
      await gate.promise;
    }
    return { verdict: 'continue' as const };
  };
  return { policy, reached: reached.promise, release: () => gate.resolve(), seen };
}

describe('steering, abort and history', () => {
  test('C6 abort after a steering message was taken for a turn but not yet delivered: it is delivered, the rest stays queued', async () => {
    const block = blockingPreTurn(1);
    const receipts: Promise<SteerReceipt>[] = [];
    let agent!: Agent;
    const model = scriptedModel((_request, callIndex) => {
      // Two steering messages while turn 0 streams; oneAtATime takes only the first for turn 1.
      if (callIndex === 0)
        receipts.push(agent.steer('use the staging database'), agent.steer('and skip the slow tests'));
      return [{ text: 'Running the migration.' }, { text: 'Skipping the slow tests.' }][callIndex];
    });
    agent = createAgent({ model, retry: { jitter: false }, policies: { preTurn: [block.policy] } });

    const run = agent.prompt('migrate the database');
    await block.reached;
    agent.abort('user pressed stop');
    const first = await finished(run);
    block.release();

    expect(lifecycle(first.events)).toEqual(['agentStart', ...TEXT_TURN, 'turnStart', 'turnEnd', 'agentEnd']);
    expectInvariants(first.events, first.result.messages);
    expect(ofType(first.events, 'turnEnd')).toMatchObject([
      { turnIndex: 0, reason: 'complete' },
      { turnIndex: 1, reason: 'aborted', assistant: null, toolResults: [] },
    ]);
    expect(first.result).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    // The taken message was committed (delivered); the other one is still queued, never lost.
    expect(first.result.messages).toEqual([
      user('migrate the database'),
      said('Running the migration.'),
      user('use the staging database'),
    ]);
    expect(await receipts[0]).toEqual({ status: 'delivered', turnIndex: 1 });
    expect(await receipts[1]).toEqual({ status: 'stillQueued' });
    expect(agent.snapshot()).toMatchObject({
      steeringQueue: [user('and skip the slow tests')],
      followUpQueue: [],
      running: false,
    });
    expectCounters(first.result.counters, { turns: 2, modelCalls: 1, steeringDelivered: 1 });

    // continue() delivers the one left in the queue.
    const second = await finished(agent.continue());
    expect(lifecycle(second.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expectInvariants([...first.events, ...second.events], agent.messages);
    // The aborted turn 1 keeps its index: the delivered receipt names it, the next turn is 2.
    expect(turnEnds(second.events)).toEqual([[2, 'complete']]);
    expect(block.seen.map((s) => [s.turnIndex, s.newMessages])).toEqual([
      [0, [user('migrate the database')]],
      [1, [user('use the staging database')]],
      [2, [user('and skip the slow tests')]],
    ]);
    expect(second.result.messages).toEqual([
      user('migrate the database'),
      said('Running the migration.'),
      user('use the staging database'),
      user('and skip the slow tests'),
      said('Skipping the slow tests.'),
    ]);
    expect(model.requests[1]?.messages).toEqual(second.result.messages.slice(0, -1));
    expect(agent.snapshot().steeringQueue).toEqual([]);
    expectCounters(second.result.counters, { turns: 3, modelCalls: 2, steeringDelivered: 2 });
  });

  test('C6 abort during the steering grace period of a tool batch: the steering message stays queued, then continue() delivers it', async () => {
    const clock = new SimulatedClock();
    const build = stuckTool('build');
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_build', name: 'build', arguments: {} }] },
      { text: 'Switched branches.' },
    ]);
    const agent = createAgent({ model, tools: [build.tool], clock, retry: { jitter: false } });

    const run = agent.prompt('build the project');
    await build.started;
    const receipt = agent.steer('stop, use the other branch');
    clock.increment(100); // inside the 250 ms grace period: the steering message is not taken yet
    agent.abort();
    const first = await finished(run);
    build.release();

    const buildCall = called([{ id: 'call_build', name: 'build', arguments: {} }]);
    const aborted = toolResult('call_build', 'build', ABORTED_RESULT, true);
    expect(lifecycle(first.events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'toolExecutionStart',
      'toolExecutionEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expectInvariants(first.events, first.result.messages);
    expect(ofType(first.events, 'turnEnd')).toMatchObject([
      { turnIndex: 0, reason: 'aborted', assistant: buildCall, toolResults: [aborted] },
    ]);
    expect(first.result).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    expect(first.result.messages).toEqual([user('build the project'), buildCall, aborted]);
    expect(await receipt).toEqual({ status: 'stillQueued' });
    expect(agent.snapshot().steeringQueue).toEqual([user('stop, use the other branch')]);
    expectCounters(first.result.counters, {
      turns: 1,
      modelCalls: 1,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      toolCallsFailed: 1,
    });

    const second = await finished(agent.continue());
    expect(lifecycle(second.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expectInvariants([...first.events, ...second.events], agent.messages);
    expect(turnEnds(second.events)).toEqual([[1, 'complete']]);
    expect(second.result.messages).toEqual([
      user('build the project'),
      buildCall,
      aborted,
      user('stop, use the other branch'),
      said('Switched branches.'),
    ]);
    expect(agent.snapshot().steeringQueue).toEqual([]);
    expectCounters(second.result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      toolCallsFailed: 1,
      steeringDelivered: 1,
    });
  });

  test('C7 abort during the model stream with tool calls, then continue(): the model gets a history with parity', async () => {
    const model = scriptedModel([
      {
        text: 'Reading both.',
        toolCalls: [
          { id: 'call_a', name: 'read', arguments: { path: 'a.txt' } },
          { id: 'call_b', name: 'read', arguments: { path: 'b.txt' } },
        ],
        stall: true,
      },
      { text: 'Resuming without them.' },
    ]);
    const agent = createAgent({ model, tools: [readTool()], retry: { jitter: false } });

    const run = agent.prompt('compare a and b');
    await settle();
    agent.abort();
    const first = await finished(run);

    const partial = called(
      [
        { id: 'call_a', name: 'read', arguments: { path: 'a.txt' } },
        { id: 'call_b', name: 'read', arguments: { path: 'b.txt' } },
      ],
      { text: 'Reading both.', stopReason: 'aborted' },
    );
    const results = [
      toolResult('call_a', 'read', ABORTED_RESULT, true),
      toolResult('call_b', 'read', ABORTED_RESULT, true),
    ];
    expect(lifecycle(first.events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expectInvariants(first.events, first.result.messages);
    expect(ofType(first.events, 'messageEnd').map((e) => e.message)).toMatchObject([{ stopReason: 'aborted' }]);
    expect(ofType(first.events, 'turnEnd')).toMatchObject([
      { turnIndex: 0, reason: 'aborted', assistant: partial, toolResults: results },
    ]);
    expect(first.result).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    expect(first.result.messages).toEqual([user('compare a and b'), partial, ...results]);
    expectCounters(first.result.counters, { turns: 1, modelCalls: 1, toolCallsRequested: 2 });

    const second = await finished(agent.continue());
    expect(lifecycle(second.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expect(turnEnds(second.events)).toEqual([[1, 'complete']]);
    expectInvariants([...first.events, ...second.events], agent.messages);
    const sent = model.requests[1]?.messages ?? [];
    expect(sent).toEqual([user('compare a and b'), partial, ...results]);
    expect(checkToolParity(sent)).toEqual({ ok: true });
    expectCounters(second.result.counters, { turns: 2, modelCalls: 2, toolCallsRequested: 2 });
  });

  test('C7 abort during tool execution (a tool ignoring its signal), then a new prompt: the model gets a history with parity', async () => {
    const slow = stuckTool('slow');
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'call_read', name: 'read', arguments: { path: 'a.txt' } },
          { id: 'call_slow', name: 'slow', arguments: {} },
        ],
      },
      { text: 'Trying again.' },
    ]);
    const agent = createAgent({ model, tools: [readTool(), slow.tool], retry: { jitter: false } });

    const run = agent.prompt('read and wait');
    await slow.started;
    await settle();
    agent.abort();
    const first = await finished(run);
    slow.release();

    const calls = called([
      { id: 'call_read', name: 'read', arguments: { path: 'a.txt' } },
      { id: 'call_slow', name: 'slow', arguments: {} },
    ]);
    const results = [readResult('call_read', 'a.txt'), toolResult('call_slow', 'slow', ABORTED_RESULT, true)];
    expect(lifecycle(first.events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'toolExecutionStart',
      'toolExecutionStart',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expectInvariants(first.events, first.result.messages);
    expect(ofType(first.events, 'turnEnd')).toMatchObject([
      { turnIndex: 0, reason: 'aborted', assistant: calls, toolResults: results },
    ]);
    expect(first.result).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    expect(first.result.messages).toEqual([user('read and wait'), calls, ...results]);
    expectCounters(first.result.counters, {
      turns: 1,
      modelCalls: 1,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      toolCallsFailed: 1,
    });

    const second = await finished(agent.prompt('try again'));
    expect(lifecycle(second.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expect(turnEnds(second.events)).toEqual([[1, 'complete']]);
    expectInvariants([...first.events, ...second.events], agent.messages);
    const sent = model.requests[1]?.messages ?? [];
    expect(sent).toEqual([user('read and wait'), calls, ...results, user('try again')]);
    expect(checkToolParity(sent)).toEqual({ ok: true });
    expectCounters(second.result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      toolCallsFailed: 1,
    });
  });

  test('C7 abort while waiting for approval, then continue(): the model gets a history with parity', async () => {
    const approvalAsked = deferred();
    const deploy = stuckTool('deploy', { requiresApproval: true });
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_deploy', name: 'deploy', arguments: {} }] },
      { text: 'Deployment cancelled.' },
    ]);
    const agent = createAgent({
      model,
      tools: [deploy.tool],
      retry: { jitter: false },
      // Never answers: the user walks away; only the abort ends the wait.
      approval: () => {
        approvalAsked.resolve();
        return new Promise(() => {});
      },
    });

    const run = agent.prompt('deploy it');
    await approvalAsked.promise;
    agent.abort();
    const first = await finished(run);

    const call = called([{ id: 'call_deploy', name: 'deploy', arguments: {} }]);
    const aborted = toolResult('call_deploy', 'deploy', ABORTED_RESULT, true);
    expect(lifecycle(first.events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'toolApprovalRequested',
      'toolApprovalResolved',
      'toolExecutionEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expectInvariants(first.events, first.result.messages);
    expect(ofType(first.events, 'toolApprovalResolved')).toMatchObject([
      { toolCallId: 'call_deploy', toolName: 'deploy', approved: false },
    ]);
    expect(ofType(first.events, 'turnEnd')).toMatchObject([
      { turnIndex: 0, reason: 'aborted', assistant: call, toolResults: [aborted] },
    ]);
    expect(first.result).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    expect(first.result.messages).toEqual([user('deploy it'), call, aborted]);
    expectCounters(first.result.counters, {
      turns: 1,
      modelCalls: 1,
      toolCallsRequested: 1,
      approvalsRequested: 1,
      approvalsDenied: 1,
    });

    const second = await finished(agent.continue());
    expect(lifecycle(second.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expect(turnEnds(second.events)).toEqual([[1, 'complete']]);
    expectInvariants([...first.events, ...second.events], agent.messages);
    const sent = model.requests[1]?.messages ?? [];
    expect(sent).toEqual([user('deploy it'), call, aborted]);
    expect(checkToolParity(sent)).toEqual({ ok: true });
    expectCounters(second.result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 1,
      approvalsRequested: 1,
      approvalsDenied: 1,
    });
  });

  test('C7 abort during pre-turn policies, then a new prompt: the model gets a history with parity', async () => {
    const block = blockingPreTurn(0);
    const model = scriptedModel([{ text: 'Here I am.' }]);
    const agent = createAgent({ model, retry: { jitter: false }, policies: { preTurn: [block.policy] } });

    const run = agent.prompt('first try');
    await block.reached;
    agent.abort();
    const first = await finished(run);
    block.release();

    expect(lifecycle(first.events)).toEqual(['agentStart', 'turnStart', 'turnEnd', 'agentEnd']);
    expectInvariants(first.events, first.result.messages);
    expect(ofType(first.events, 'turnEnd')).toMatchObject([
      { turnIndex: 0, reason: 'aborted', assistant: null, toolResults: [] },
    ]);
    expect(first.result).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    expect(first.result.messages).toEqual([user('first try')]);
    expect(model.calls).toBe(0);
    expectCounters(first.result.counters, { turns: 1 });

    const second = await finished(agent.prompt('second try'));
    expect(lifecycle(second.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expect(turnEnds(second.events)).toEqual([[1, 'complete']]);
    expectInvariants([...first.events, ...second.events], agent.messages);
    const sent = model.requests[0]?.messages ?? [];
    expect(sent).toEqual([user('first try'), user('second try')]);
    expect(checkToolParity(sent)).toEqual({ ok: true });
    expectCounters(second.result.counters, { turns: 2, modelCalls: 1 });
  });

  test('C7 abort during a stalled text stream, then a new prompt: the model gets the partial answer and the prompt', async () => {
    const model = scriptedModel([{ text: 'Thinking about', stall: true }, { text: 'Done.' }]);
    const agent = createAgent({ model, retry: { jitter: false } });

    const run = agent.prompt('think hard');
    await settle();
    agent.abort();
    const first = await finished(run);

    const partial = { ...said('Thinking about'), stopReason: 'aborted' as const };
    expect(lifecycle(first.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expectInvariants(first.events, first.result.messages);
    expect(ofType(first.events, 'turnEnd')).toMatchObject([
      { turnIndex: 0, reason: 'aborted', assistant: partial, toolResults: [] },
    ]);
    expect(first.result).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    expect(first.result.messages).toEqual([user('think hard'), partial]);
    expectCounters(first.result.counters, { turns: 1, modelCalls: 1 });

    const second = await finished(agent.prompt('go on'));
    expect(lifecycle(second.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expect(turnEnds(second.events)).toEqual([[1, 'complete']]);
    expectInvariants([...first.events, ...second.events], agent.messages);
    const sent = model.requests[1]?.messages ?? [];
    expect(sent).toEqual([user('think hard'), partial, user('go on')]);
    expect(checkToolParity(sent)).toEqual({ ok: true });
    expectCounters(second.result.counters, { turns: 2, modelCalls: 2 });
  });
});
