import { describe, expect, test } from 'vitest';
import { createAgent } from 'agentchart';
import type { Agent, AgentEvent, AssistantMessage, Message, SteerReceipt } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, lifecycle, ofType, settle } from '../support/harness.js';
import {
  calledRead,
  readResult,
  readTool,
  said,
  streamedText,
  TEXT_TURN,
  TOOL_TURN,
  turnEnds,
  turnIndices,
  user,
} from './session-fixtures.js';

// Scenarios L1–L8 (test/scenarios/README.md), driven through createAgent with a scripted model.

describe('lifecycle', () => {
  test('L1 text-only turn: one complete turn at index 0, history is prompt + assistant', async () => {
    const usage = { input: 12, output: 6 };
    const model = scriptedModel([{ text: 'Hello! How can I help?', usage }]);
    const agent = createAgent({ model, retry: { jitter: false } });

    const { result, events } = await finished(agent.prompt('hello'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expectInvariants(events, result.messages);
    const answer = said('Hello! How can I help?', usage);
    expect(turnIndices(events)).toEqual(Array(events.length - 2).fill(0));
    expect(ofType(events, 'turnEnd')).toMatchObject([
      { turnIndex: 0, reason: 'complete', assistant: answer, toolResults: [] },
    ]);
    expect(ofType(events, 'messageEnd').map((e) => e.message)).toEqual([answer]);
    expect(streamedText(events)).toBe('Hello! How can I help?');
    expect(ofType(events, 'agentEnd')).toMatchObject([
      { status: 'completed', endReason: 'naturalEnd', messages: [user('hello'), answer] },
    ]);
    expect({ status: result.status, endReason: result.endReason, error: result.error }).toEqual({
      status: 'completed',
      endReason: 'naturalEnd',
      error: undefined,
    });
    expect(result.messages).toEqual([user('hello'), answer]);
    expect(agent.messages).toEqual(result.messages);
    // The model answers the prompt: its one request holds exactly the prompt.
    expect(model.requests.map((r) => r.messages)).toEqual([[user('hello')]]);
    expect(ofType(events, 'beforeModelCall').map((e) => e.messages)).toEqual([[user('hello')]]);
    expectCounters(result.counters, { turns: 1, modelCalls: 1, tokensIn: 12, tokensOut: 6 });
    expect(ofType(events, 'agentEnd')[0]?.counters).toEqual(result.counters);
    expect(agent.counters).toEqual(result.counters);
  });

  test('L2 tool call then text: two turns, tool start/end between messageEnd and turnEnd, second call sees user + assistant + toolResult', async () => {
    const model = scriptedModel([
      {
        toolCalls: [{ id: 'call_1', name: 'read', arguments: { path: 'notes.txt' } }],
        usage: { input: 10, output: 3 },
      },
      { text: 'The notes say hi.', usage: { input: 20, output: 4 } },
    ]);
    const agent = createAgent({ model, tools: [readTool()], retry: { jitter: false } });

    const { result, events } = await finished(agent.prompt('what do my notes say?'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TOOL_TURN, ...TEXT_TURN, 'agentEnd']);
    expectInvariants(events, result.messages);
    const call = calledRead('call_1', 'notes.txt', { input: 10, output: 3 });
    const answer = said('The notes say hi.', { input: 20, output: 4 });
    const toolResult = readResult('call_1', 'notes.txt');
    expect(ofType(events, 'turnEnd')).toMatchObject([
      { turnIndex: 0, reason: 'toolsExecuted', assistant: call, toolResults: [toolResult] },
      { turnIndex: 1, reason: 'complete', assistant: answer, toolResults: [] },
    ]);
    expect(ofType(events, 'toolExecutionStart')).toMatchObject([
      { turnIndex: 0, toolCallId: 'call_1', toolName: 'read', arguments: { path: 'notes.txt' } },
    ]);
    expect(ofType(events, 'toolExecutionEnd')).toMatchObject([
      { turnIndex: 0, toolCallId: 'call_1', toolName: 'read', result: 'contents of notes.txt', isError: false },
    ]);
    expect(model.requests.map((r) => r.messages)).toEqual([
      [user('what do my notes say?')],
      [user('what do my notes say?'), call, toolResult],
    ]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(result.messages).toEqual([user('what do my notes say?'), call, toolResult, answer]);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      tokensIn: 30,
      tokensOut: 7,
    });
  });

  test('L3 steering queued during a text-only turn continues the inner loop: second turn with no follow-up poll between', async () => {
    const journal: string[] = [];
    const receipts: Promise<SteerReceipt>[] = [];
    const answers = ['First answer.', 'Checked the tests too.', 'Summary: all good.'];
    let agent!: Agent;
    const model = scriptedModel((_request, callIndex) => {
      journal.push(`model call ${callIndex}`);
      // Both arrive while turn 0 streams: steering must be taken before the follow-up is even polled.
      if (callIndex === 0) receipts.push(agent.steer('also check the tests'), agent.followUp('then summarize'));
      const text = answers[callIndex];
      return text === undefined ? undefined : { text, usage: { input: 5, output: 2 } };
    });
    agent = createAgent({
      model,
      retry: { jitter: false },
      policies: {
        postLoop: [
          ({ counters }) => {
            journal.push(
              `postLoop (steering ${counters.steeringDelivered}, follow-ups ${counters.followUpsDelivered})`,
            );
            return { verdict: 'continue' };
          },
        ],
      },
    });

    const { result, events } = await finished(agent.prompt('review my change'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TEXT_TURN, ...TEXT_TURN, ...TEXT_TURN, 'agentEnd']);
    expectInvariants(events, result.messages);
    expect(journal).toEqual([
      'model call 0',
      'model call 1',
      'postLoop (steering 1, follow-ups 0)',
      'model call 2',
      'postLoop (steering 1, follow-ups 1)',
    ]);
    expect(turnEnds(events)).toEqual([
      [0, 'complete'],
      [1, 'complete'],
      [2, 'complete'],
    ]);
    const usage = { input: 5, output: 2 };
    expect(result.messages).toEqual([
      user('review my change'),
      said(answers[0] as string, usage),
      user('also check the tests'),
      said(answers[1] as string, usage),
      user('then summarize'),
      said(answers[2] as string, usage),
    ]);
    // The model saw the steering message in turn 1 and the follow-up only in turn 2.
    expect(model.requests.map((r) => r.messages)).toEqual([
      result.messages.slice(0, 1),
      result.messages.slice(0, 3),
      result.messages.slice(0, 5),
    ]);
    expect(await Promise.all(receipts)).toEqual([
      { status: 'delivered', turnIndex: 1 },
      { status: 'delivered', turnIndex: 2 },
    ]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectCounters(result.counters, {
      turns: 3,
      modelCalls: 3,
      steeringDelivered: 1,
      followUpsDelivered: 1,
      tokensIn: 15,
      tokensOut: 6,
    });
  });

  test('L4 text turn then a queued follow-up: two turns (0 and 1), the follow-up taken only after post-loop policies', async () => {
    const journal: string[] = [];
    const loopContexts: Array<{ turnIndex: number; messages: readonly Message[]; newMessages: readonly Message[] }> =
      [];
    let receipt: Promise<SteerReceipt> | undefined;
    let agent!: Agent;
    const model = scriptedModel((_request, callIndex) => {
      journal.push(`model call ${callIndex}`);
      if (callIndex === 0) receipt = agent.followUp('and the other file?');
      return [{ text: 'File A is fine.' }, { text: 'File B is fine too.' }][callIndex];
    });
    agent = createAgent({
      model,
      retry: { jitter: false },
      policies: {
        postLoop: [
          ({ turnIndex, messages, newMessages, counters }) => {
            journal.push(`postLoop (follow-ups delivered ${counters.followUpsDelivered})`);
            loopContexts.push({ turnIndex, messages, newMessages });
            return { verdict: 'continue' };
          },
        ],
      },
    });

    const { result, events } = await finished(agent.prompt('check file A'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TEXT_TURN, ...TEXT_TURN, 'agentEnd']);
    expectInvariants(events, result.messages);
    expect(ofType(events, 'turnStart').map((e) => e.turnIndex)).toEqual([0, 1]);
    expect(turnEnds(events)).toEqual([
      [0, 'complete'],
      [1, 'complete'],
    ]);
    expect(journal).toEqual([
      'model call 0',
      'postLoop (follow-ups delivered 0)',
      'model call 1',
      'postLoop (follow-ups delivered 1)',
    ]);
    // The first post-loop saw the history before the follow-up was taken.
    expect(loopContexts[0]).toEqual({
      turnIndex: 1,
      messages: [user('check file A'), said('File A is fine.')],
      newMessages: [],
    });
    expect(result.messages).toEqual([
      user('check file A'),
      said('File A is fine.'),
      user('and the other file?'),
      said('File B is fine too.'),
    ]);
    expect(model.requests.map((r) => r.messages)).toEqual([result.messages.slice(0, 1), result.messages.slice(0, 3)]);
    expect(await receipt).toEqual({ status: 'delivered', turnIndex: 1 });
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectCounters(result.counters, { turns: 2, modelCalls: 2, followUpsDelivered: 1 });
  });

  test("L3 L4 queue modes 'all': every queued steering message goes into the next turn, every follow-up into the turn after post-loop", async () => {
    const receipts: Promise<SteerReceipt>[] = [];
    let agent!: Agent;
    const model = scriptedModel((_request, callIndex) => {
      if (callIndex === 0)
        receipts.push(agent.steer('s1'), agent.steer('s2'), agent.followUp('f1'), agent.followUp('f2'));
      return [{ text: 'a0' }, { text: 'a1' }, { text: 'a2' }][callIndex];
    });
    agent = createAgent({ model, steeringMode: 'all', followUpMode: 'all', retry: { jitter: false } });

    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TEXT_TURN, ...TEXT_TURN, ...TEXT_TURN, 'agentEnd']);
    expectInvariants(events, result.messages);
    const history = [user('go'), said('a0'), user('s1'), user('s2'), said('a1'), user('f1'), user('f2'), said('a2')];
    expect(result.messages).toEqual(history);
    expect(model.requests.map((r) => r.messages)).toEqual([
      history.slice(0, 1),
      history.slice(0, 4),
      history.slice(0, 7),
    ]);
    expect(await Promise.all(receipts)).toEqual([
      { status: 'delivered', turnIndex: 1 },
      { status: 'delivered', turnIndex: 1 },
      { status: 'delivered', turnIndex: 2 },
      { status: 'delivered', turnIndex: 2 },
    ]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectCounters(result.counters, { turns: 3, modelCalls: 3, steeringDelivered: 2, followUpsDelivered: 2 });
  });

  test('L5 turnIndex advances after every completed turn, text-only turns included, and continues across runs', async () => {
    let agent!: Agent;
    let receipt: Promise<SteerReceipt> | undefined;
    const model = scriptedModel((_request, callIndex) => {
      if (callIndex === 0) receipt = agent.steer('one more thing');
      return [
        { text: 'one' },
        { text: 'one more' },
        { toolCalls: [{ id: 'call_r', name: 'read', arguments: { path: 'a.txt' } }] },
        { text: 'read it' },
        { text: 'three' },
      ][callIndex];
    });
    agent = createAgent({ model, tools: [readTool()], retry: { jitter: false } });

    const first = await finished(agent.prompt('first'));
    const second = await finished(agent.prompt('second'));
    const third = await finished(agent.prompt('third'));
    const runs = [first, second, third];
    const all = runs.flatMap((run) => run.events);

    expect(runs.map((run) => lifecycle(run.events))).toEqual([
      ['agentStart', ...TEXT_TURN, ...TEXT_TURN, 'agentEnd'],
      ['agentStart', ...TOOL_TURN, ...TEXT_TURN, 'agentEnd'],
      ['agentStart', ...TEXT_TURN, 'agentEnd'],
    ]);
    expectInvariants(all, agent.messages);
    expect(runs.map((run) => ofType(run.events, 'turnStart').map((e) => e.turnIndex))).toEqual([[0, 1], [2, 3], [4]]);
    expect(runs.map((run) => turnEnds(run.events))).toEqual([
      [
        [0, 'complete'],
        [1, 'complete'],
      ],
      [
        [2, 'toolsExecuted'],
        [3, 'complete'],
      ],
      [[4, 'complete']],
    ]);
    // Each run has its own runId and its own seq from 0.
    expect(new Set(all.map((e) => e.runId)).size).toBe(3);
    for (const run of runs) expect(run.events.map((e) => e.seq)).toEqual(run.events.map((_, i) => i));
    expect(agent.snapshot().turnIndex).toBe(5);
    expect(await receipt).toEqual({ status: 'delivered', turnIndex: 1 });
    // Counters are cumulative per agent.
    expectCounters(first.result.counters, { turns: 2, modelCalls: 2, steeringDelivered: 1 });
    expectCounters(second.result.counters, {
      turns: 4,
      modelCalls: 4,
      steeringDelivered: 1,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
    });
    expectCounters(third.result.counters, {
      turns: 5,
      modelCalls: 5,
      steeringDelivered: 1,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
    });
    expect(agent.counters).toEqual(third.result.counters);
  });

  test('L5 turnIndex advances after an aborted turn: the next run does not reuse its index', async () => {
    const model = scriptedModel([{ text: 'one' }, { text: 'two', stall: true }, { text: 'three' }]);
    const agent = createAgent({ model, retry: { jitter: false } });

    const first = await finished(agent.prompt('first'));
    const run = agent.prompt('second');
    await settle();
    agent.abort();
    const second = await finished(run);
    const third = await finished(agent.prompt('third'));

    expect(lifecycle(first.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expect(lifecycle(second.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expect(lifecycle(third.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expectInvariants([...first.events, ...second.events, ...third.events], agent.messages);
    expect([first, second, third].map((run) => turnEnds(run.events))).toEqual([
      [[0, 'complete']],
      [[1, 'aborted']],
      [[2, 'complete']],
    ]);
    expect(agent.snapshot().turnIndex).toBe(3);
    expect(agent.messages).toEqual([
      user('first'),
      said('one'),
      user('second'),
      { ...said('two'), stopReason: 'aborted' },
      user('third'),
      said('three'),
    ]);
    expectCounters(third.result.counters, { turns: 3, modelCalls: 3 });
  });

  test('L5 turnIndex advances after a turn a post-turn policy stopped: the next run does not reuse its index', async () => {
    const model = scriptedModel([{ text: 'one' }, { text: 'two' }]);
    const agent = createAgent({
      model,
      retry: { jitter: false },
      policies: {
        postTurn: [
          ({ turnIndex }) => (turnIndex === 0 ? { verdict: 'stop', reason: 'review first' } : { verdict: 'continue' }),
        ],
      },
    });

    const first = await finished(agent.prompt('first'));
    const second = await finished(agent.prompt('second'));

    expect(lifecycle(first.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expect(lifecycle(second.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expectInvariants([...first.events, ...second.events], agent.messages);
    expect(first.result).toMatchObject({ status: 'completed', endReason: 'policyStop' });
    expect([first, second].map((run) => turnEnds(run.events))).toEqual([[[0, 'complete']], [[1, 'complete']]]);
    expect(agent.snapshot().turnIndex).toBe(2);
    expectCounters(second.result.counters, { turns: 2, modelCalls: 2 });
  });

  test('L7 provider fatal error: messageEnd(error), turnEnd(error), agentEnd; follow-ups not polled', async () => {
    let receipt: Promise<SteerReceipt> | undefined;
    let postLoopRuns = 0;
    let agent!: Agent;
    const model = scriptedModel((_request, callIndex) => {
      if (callIndex === 0) receipt = agent.followUp('and then deploy');
      return callIndex === 0
        ? {
            text: 'Let me',
            usage: { input: 8, output: 2 },
            error: { kind: 'auth', message: 'invalid API key', status: 401 },
          }
        : undefined;
    });
    agent = createAgent({
      model,
      retry: { jitter: false },
      policies: { postLoop: [() => (postLoopRuns++, { verdict: 'continue' })] },
    });

    const { result, events } = await finished(agent.prompt('build it'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expectInvariants(events, result.messages);
    const failed: AssistantMessage = {
      role: 'assistant',
      content: [{ type: 'text', text: 'Let me' }],
      stopReason: 'error',
      model: 'scripted',
      usage: { input: 8, output: 2 },
      errorMessage: 'invalid API key',
    };
    expect(ofType(events, 'messageEnd').map((e) => e.message)).toEqual([failed]);
    expect(ofType(events, 'turnEnd')).toMatchObject([
      { turnIndex: 0, reason: 'error', assistant: failed, toolResults: [] },
    ]);
    expect(ofType(events, 'agentEnd')).toMatchObject([{ status: 'failed', endReason: 'fatalError' }]);
    expect(result).toMatchObject({
      status: 'failed',
      endReason: 'fatalError',
      error: { code: 'auth', message: 'invalid API key' },
    });
    expect(result.messages).toEqual([user('build it'), failed]);
    // Not polled: the follow-up is still queued, its receipt says so, and post-loop never ran.
    expect(await receipt).toEqual({ status: 'stillQueued' });
    expect(agent.snapshot()).toMatchObject({
      followUpQueue: [user('and then deploy')],
      steeringQueue: [],
      running: false,
    });
    expect(postLoopRuns).toBe(0);
    expect(model.calls).toBe(1);
    expectCounters(result.counters, {
      turns: 1,
      turnsFailed: 1,
      modelCalls: 1,
      tokensIn: 8,
      tokensOut: 2,
      failureCodes: { auth: 1 },
    });
  });

  test('L8 a subscriber that throws does not break the run or other subscribers', async () => {
    const subscriberErrors: unknown[] = [];
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_1', name: 'read', arguments: { path: 'a.txt' } }] },
      { text: 'done' },
    ]);
    const agent = createAgent({
      model,
      tools: [readTool()],
      retry: { jitter: false },
      onSubscriberError: (error) => subscriberErrors.push(error),
    });
    const agentLevel: AgentEvent[] = [];
    agent.events.subscribe(() => {
      throw new Error('agent-level subscriber broke');
    });
    agent.events.subscribe((event) => agentLevel.push(event));

    const run = agent.prompt('hello');
    const runLevel: AgentEvent[] = [];
    let completed = false;
    run.events.subscribe({
      next: (event) => {
        throw new Error(`run-level subscriber broke on ${event.type}`);
      },
      complete: () => {
        throw new Error('run-level complete broke');
      },
    });
    run.events.subscribe({ next: (event) => runLevel.push(event), complete: () => (completed = true) });
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual(['agentStart', ...TOOL_TURN, ...TEXT_TURN, 'agentEnd']);
    expectInvariants(events, result.messages);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(result.messages).toEqual([
      user('hello'),
      calledRead('call_1', 'a.txt'),
      readResult('call_1', 'a.txt'),
      said('done'),
    ]);
    // The other subscribers got every event, in order, and the completion.
    expect(runLevel).toEqual(events);
    expect(agentLevel).toEqual(events);
    expect(completed).toBe(true);
    // Every throw was reported, none was lost or escaped.
    const expectedErrors = [
      ...events.map((event) => `run-level subscriber broke on ${event.type}`),
      ...events.map(() => 'agent-level subscriber broke'),
      'run-level complete broke',
    ];
    expect(subscriberErrors.map((error) => (error as Error).message).sort()).toEqual(expectedErrors.sort());
    expectCounters(result.counters, { turns: 2, modelCalls: 2, toolCallsRequested: 1, toolCallsExecuted: 1 });
  });
});
