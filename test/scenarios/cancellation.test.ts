import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import {
  createAgent,
  defineTool,
  type AssistantMessage,
  type Message,
  type Model,
  type ModelStreamEvent,
} from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { deferred, expectCounters, expectInvariants, finished, lifecycle, settle } from '../support/harness.js';
import { ofType, toolResult, toolTrace } from './tools-fixtures.js';

/** Steering and cancellation scenarios C1–C5 (test/scenarios/README.md), driven through the public API. */

const ABORTED = 'aborted: the run was cancelled before this tool call finished';
const CANCELLED_BY_STEERING = 'cancelled: steering (the user sent a new message; this call was interrupted)';
const STREAM_HEAD = ['agentStart', 'turnStart', 'beforeModelCall', 'messageStart', 'messageUpdate+', 'messageEnd'];
const ABORTED_TAIL = ['turnEnd', 'agentEnd'];
const TEXT_TURN = ['turnStart', 'beforeModelCall', 'messageStart', 'messageUpdate+', 'messageEnd', 'turnEnd'];

const noArgs = z.object({});
const instantTool = (name: string, ran: string[] = []) =>
  defineTool({
    name,
    description: `${name} tool`,
    parameters: noArgs,
    execute: () => (ran.push(name), `${name} done`),
  });

/** A tool that runs until `until` settles, ignoring its signal (the signal is kept for assertions). */
function blockingTool(name: string, until: Promise<string> = new Promise<string>(() => {})) {
  const started = deferred();
  let signal: AbortSignal | undefined;
  const tool = defineTool({
    name,
    description: `${name} tool`,
    parameters: noArgs,
    execute: (_args, ctx) => {
      signal = ctx.signal;
      started.resolve();
      return until;
    },
  });
  return { tool, started: started.promise, signal: () => signal };
}

const assistant = (
  content: AssistantMessage['content'],
  stopReason: AssistantMessage['stopReason'],
  extra: Partial<AssistantMessage> = {},
): AssistantMessage => ({
  role: 'assistant',
  content,
  stopReason,
  model: 'scripted',
  ...extra,
});
const call = (id: string, name: string, args: Record<string, unknown> = {}) => ({
  type: 'toolCall' as const,
  id,
  name,
  arguments: args,
});
const user = (content: string): Message => ({ role: 'user', content });

function expectAbortedEnd(
  events: Parameters<typeof ofType>[0],
  turnAssistant: AssistantMessage | null,
  toolResults: Message[],
): void {
  const turnEnds = ofType(events, 'turnEnd');
  expect(turnEnds.map((e) => [e.turnIndex, e.reason, e.assistant, e.toolResults])).toEqual([
    [0, 'aborted', turnAssistant, toolResults],
  ]);
  const agentEnd = ofType(events, 'agentEnd')[0];
  expect([agentEnd?.status, agentEnd?.endReason]).toEqual(['aborted', 'aborted']);
}

describe('C1 steering interrupts a running batch', () => {
  it('C1 steering mid-batch: the slow tool is cancelled after the grace period; turnEnd(steeringInterrupt) keeps the finished result; the steering message is the next input', async () => {
    const clock = new SimulatedClock();
    const slow = blockingTool('slow');
    const model = scriptedModel([
      {
        text: 'Running both.',
        toolCalls: [
          { id: 'c1', name: 'fast' },
          { id: 'c2', name: 'slow' },
        ],
        usage: { input: 10, output: 5 },
      },
      { text: 'Switching.', usage: { input: 20, output: 3 } },
    ]);
    const agent = createAgent({ model, tools: [instantTool('fast'), slow.tool], clock, retry: { jitter: false } });
    const run = agent.prompt('do both');
    const seen: string[] = [];
    run.events.subscribe((event) => seen.push(event.type));
    await slow.started;
    await settle(); // the fast call has finished
    const receipt = agent.steer('stop, do this instead');
    await settle();

    // Within the grace period nothing is cancelled.
    clock.increment(249);
    await settle();
    expect([slow.signal()?.aborted, seen.includes('turnEnd')]).toEqual([false, false]);
    clock.increment(1);
    const { result, events } = await finished(run);

    const batch = ['toolExecutionStart', 'toolExecutionStart', 'toolExecutionEnd', 'toolExecutionEnd', 'turnEnd'];
    expect(lifecycle(events)).toEqual([...STREAM_HEAD, ...batch, ...TEXT_TURN, 'agentEnd']);
    expect(toolTrace(events)).toEqual(['start:c1', 'start:c2', 'end:c1', 'end:c2!']);
    const toolTurn = assistant(
      [{ type: 'text', text: 'Running both.' }, call('c1', 'fast'), call('c2', 'slow')],
      'toolUse',
      { usage: { input: 10, output: 5 } },
    );
    const results = [toolResult('c1', 'fast', 'fast done'), toolResult('c2', 'slow', CANCELLED_BY_STEERING, true)];
    expect(ofType(events, 'turnEnd').map((e) => [e.turnIndex, e.reason, e.toolResults])).toEqual([
      [0, 'steeringInterrupt', results],
      [1, 'complete', []],
    ]);
    expect(slow.signal()?.aborted).toBe(true);
    expect(await receipt).toEqual({ status: 'delivered', turnIndex: 1 });
    const secondInput = [user('do both'), toolTurn, ...results, user('stop, do this instead')];
    expect(model.requests.map((request) => request.messages)).toEqual([[user('do both')], secondInput]);
    const final = assistant([{ type: 'text', text: 'Switching.' }], 'stop', { usage: { input: 20, output: 3 } });
    expect([result.status, result.endReason]).toEqual(['completed', 'naturalEnd']);
    expect(result.messages).toEqual([...secondInput, final]);
    expectInvariants(events, result.messages);
    const executed = { toolCallsRequested: 2, toolCallsExecuted: 2, toolCallsFailed: 1 };
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      ...executed,
      steeringDelivered: 1,
      tokensIn: 30,
      tokensOut: 8,
    });
  });
});

describe('C2 abort during the model stream', () => {
  it('C2 abort during the model stream: a stalled stream (stall) ends as messageEnd(aborted) keeping its partial content; its tool call gets an aborted result', async () => {
    const ran: string[] = [];
    const model = scriptedModel([
      { text: 'Let me check', toolCalls: [{ id: 'c1', name: 'lookup' }], usage: { input: 7, output: 2 }, stall: true },
    ]);
    const agent = createAgent({ model, tools: [instantTool('lookup', ran)], retry: { jitter: false } });
    const run = agent.prompt('go');
    await settle(); // the scripted stream has delivered its content and now holds the stream open
    agent.abort();
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual([...STREAM_HEAD, 'toolExecutionEnd', ...ABORTED_TAIL]);
    const partial = assistant([{ type: 'text', text: 'Let me check' }, call('c1', 'lookup')], 'aborted', {
      usage: { input: 7, output: 2 },
    });
    expect(ofType(events, 'messageEnd').map((e) => e.message)).toEqual([partial]);
    const results = [toolResult('c1', 'lookup', ABORTED, true)];
    expect(toolTrace(events)).toEqual(['end:c1!']);
    expectAbortedEnd(events, partial, results);
    expect([result.status, result.endReason]).toEqual(['aborted', 'aborted']);
    expect(result.messages).toEqual([user('go'), partial, ...results]);
    expect(ran).toEqual([]);
    expect(model.requests.map((request) => request.messages)).toEqual([[user('go')]]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, modelCalls: 1, toolCallsRequested: 1, tokensIn: 7, tokensOut: 2 });
  });

  it('C2 abort during the model stream: abort while the stream waits for its first delta (delay on the simulated clock)', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel([{ text: 'never sent', delayMs: 5_000 }], { clock });
    const agent = createAgent({ model, clock, retry: { jitter: false } });
    const run = agent.prompt('go');
    await settle();
    agent.abort();
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'messageStart',
      'messageEnd',
      ...ABORTED_TAIL,
    ]);
    const empty = assistant([], 'aborted');
    expect(ofType(events, 'messageEnd').map((e) => e.message)).toEqual([empty]);
    expectAbortedEnd(events, empty, []);
    expect(result.messages).toEqual([user('go'), empty]);
    expect(model.calls).toBe(1);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, modelCalls: 1 });
  });

  it('C2 abort during the model stream: a provider stream that stalls and ignores its signal does not block the abort', async () => {
    let providerSignal: AbortSignal | undefined;
    // Never yields, never ends, never looks at the signal: only the runtime can end this call.
    const deaf: Model = {
      name: 'deaf',
      stream: (_request, { signal }) => {
        providerSignal = signal;
        return {
          [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<ModelStreamEvent>>(() => {}) }),
        };
      },
    };
    const agent = createAgent({ model: deaf, retry: { jitter: false } });
    const run = agent.prompt('go');
    await settle();
    agent.abort();
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'messageStart',
      'messageEnd',
      ...ABORTED_TAIL,
    ]);
    const empty = assistant([], 'aborted', { model: 'deaf' });
    expectAbortedEnd(events, empty, []);
    expect(result.messages).toEqual([user('go'), empty]);
    expect(providerSignal?.aborted).toBe(true);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, modelCalls: 1 });
  });
});

describe('C3 abort during tool execution', () => {
  it('C3 abort during tool execution: a tool that ignores its signal does not hold the turn; the finished call keeps its result, the other gets aborted', async () => {
    const stubbornResult = deferred<string>();
    const stubborn = blockingTool('stubborn', stubbornResult.promise);
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'c1', name: 'fast' },
          { id: 'c2', name: 'stubborn' },
        ],
        usage: { input: 4, output: 6 },
      },
    ]);
    const agent = createAgent({ model, tools: [instantTool('fast'), stubborn.tool], retry: { jitter: false } });
    const run = agent.prompt('go');
    await stubborn.started;
    await settle(); // the fast call has finished
    agent.abort();
    const { result, events } = await finished(run); // resolves while the stubborn tool still runs

    expect(lifecycle(events)).toEqual([
      ...STREAM_HEAD,
      'toolExecutionStart',
      'toolExecutionStart',
      'toolExecutionEnd',
      'toolExecutionEnd',
      ...ABORTED_TAIL,
    ]);
    expect(toolTrace(events)).toEqual(['start:c1', 'start:c2', 'end:c1', 'end:c2!']);
    const toolTurn = assistant([call('c1', 'fast'), call('c2', 'stubborn')], 'toolUse', {
      usage: { input: 4, output: 6 },
    });
    const results = [toolResult('c1', 'fast', 'fast done'), toolResult('c2', 'stubborn', ABORTED, true)];
    expectAbortedEnd(events, toolTurn, results);
    expect(result.messages).toEqual([user('go'), toolTurn, ...results]);
    expect(stubborn.signal()?.aborted).toBe(true);
    expect(model.requests.map((request) => request.messages)).toEqual([[user('go')]]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 1,
      modelCalls: 1,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      toolCallsFailed: 1,
      tokensIn: 4,
      tokensOut: 6,
    });

    // The tool finishing after the run ended changes nothing.
    const late: string[] = [];
    agent.events.subscribe((event) => late.push(event.type));
    stubbornResult.resolve('too late');
    await settle();
    expect(late).toEqual([]);
    expect(agent.messages).toEqual(result.messages);
  });

  it('C3 abort during tool execution: a call still queued behind the concurrency limit never starts and gets an aborted result', async () => {
    const ran: string[] = [];
    const hanging = blockingTool('hanging');
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'c1', name: 'hanging' },
          { id: 'c2', name: 'queued' },
        ],
      },
    ]);
    const agent = createAgent({
      model,
      tools: [hanging.tool, instantTool('queued', ran)],
      toolExecution: { concurrency: 1 },
      retry: { jitter: false },
    });
    const run = agent.prompt('go');
    await hanging.started;
    agent.abort();
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual([
      ...STREAM_HEAD,
      'toolExecutionStart',
      'toolExecutionEnd',
      'toolExecutionEnd',
      ...ABORTED_TAIL,
    ]);
    expect(toolTrace(events)).toEqual(['start:c1', 'end:c1!', 'end:c2!']);
    const toolTurn = assistant([call('c1', 'hanging'), call('c2', 'queued')], 'toolUse');
    const results = [toolResult('c1', 'hanging', ABORTED, true), toolResult('c2', 'queued', ABORTED, true)];
    expectAbortedEnd(events, toolTurn, results);
    expect(result.messages).toEqual([user('go'), toolTurn, ...results]);
    expect(ran).toEqual([]);
    expect(model.calls).toBe(1);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 1,
      modelCalls: 1,
      toolCallsRequested: 2,
      toolCallsExecuted: 1,
      toolCallsFailed: 1,
    });
  });
});

describe('C4 abort in the tool phases', () => {
  it('C4 abort while waiting for approval: toolApprovalResolved(false) inside the turn, no start, an aborted result', async () => {
    const ran: string[] = [];
    const asked = deferred();
    let approvalSignal: AbortSignal | undefined;
    const guarded = defineTool({
      name: 'guarded',
      description: 'needs approval',
      parameters: noArgs,
      requiresApproval: true,
      execute: () => (ran.push('guarded'), 'ran'),
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'c1', name: 'guarded' }] }]);
    const agent = createAgent({
      model,
      tools: [guarded],
      approval: (_request, { signal }) => {
        approvalSignal = signal;
        asked.resolve();
        return new Promise(() => {});
      },
      retry: { jitter: false },
    });
    const run = agent.prompt('go');
    await asked.promise;
    agent.abort();
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual([
      ...STREAM_HEAD,
      'toolApprovalRequested',
      'toolApprovalResolved',
      'toolExecutionEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['ask:c1', 'denied:c1', 'end:c1!']);
    const toolTurn = assistant([call('c1', 'guarded')], 'toolUse');
    const results = [toolResult('c1', 'guarded', ABORTED, true)];
    expectAbortedEnd(events, toolTurn, results);
    expect(result.messages).toEqual([user('go'), toolTurn, ...results]);
    expect([approvalSignal?.aborted, ran, model.calls]).toEqual([true, [], 1]);
    expectInvariants(events, result.messages);
    // The call was aborted, not rejected by the user: it is not counted as a rejected call.
    expectCounters(result.counters, {
      turns: 1,
      modelCalls: 1,
      toolCallsRequested: 1,
      approvalsRequested: 1,
      approvalsDenied: 1,
    });
  });

  it('C4 abort between sequential groups: the later group never starts; the finished call keeps its result', async () => {
    const ran: string[] = [];
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'c1', name: 'first' },
          { id: 'c2', name: 'second' },
        ],
      },
    ]);
    const agent = createAgent({
      model,
      tools: [instantTool('first', ran), instantTool('second', ran)],
      toolExecution: 'sequential',
      retry: { jitter: false },
    });
    const run = agent.prompt('go');
    // The only moment between the groups: the first call's end has been announced, the second not started.
    run.events.subscribe((event) => {
      if (event.type === 'toolExecutionEnd' && event.toolCallId === 'c1') agent.abort();
    });
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual([
      ...STREAM_HEAD,
      'toolExecutionStart',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['start:c1', 'end:c1', 'end:c2!']);
    const toolTurn = assistant([call('c1', 'first'), call('c2', 'second')], 'toolUse');
    const results = [toolResult('c1', 'first', 'first done'), toolResult('c2', 'second', ABORTED, true)];
    expectAbortedEnd(events, toolTurn, results);
    expect(result.messages).toEqual([user('go'), toolTurn, ...results]);
    expect([ran, model.calls]).toEqual([['first'], 1]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, modelCalls: 1, toolCallsRequested: 2, toolCallsExecuted: 1 });
  });

  it('C4 abort during pre-dispatch: no approval starts, no tool starts, every call gets an aborted result', async () => {
    const ran: string[] = [];
    const approvals: string[] = [];
    const policyGate = deferred<{ verdict: 'continue' }>();
    const policyEntered = deferred();
    const guarded = defineTool({
      name: 'guarded',
      description: 'needs approval',
      parameters: noArgs,
      requiresApproval: true,
      execute: () => (ran.push('guarded'), 'ran'),
    });
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'c1', name: 'guarded' },
          { id: 'c2', name: 'guarded' },
        ],
      },
    ]);
    const agent = createAgent({
      model,
      tools: [guarded],
      approval: (request) => (approvals.push(request.toolCallId), { approved: true }),
      policies: {
        preDispatch: [
          () => {
            policyEntered.resolve();
            return policyGate.promise;
          },
        ],
      },
      retry: { jitter: false },
    });
    const run = agent.prompt('go');
    await policyEntered.promise;
    agent.abort();
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual([...STREAM_HEAD, 'toolExecutionEnd', 'toolExecutionEnd', ...ABORTED_TAIL]);
    expect(toolTrace(events)).toEqual(['end:c1!', 'end:c2!']);
    const toolTurn = assistant([call('c1', 'guarded'), call('c2', 'guarded')], 'toolUse');
    const results = [toolResult('c1', 'guarded', ABORTED, true), toolResult('c2', 'guarded', ABORTED, true)];
    expectAbortedEnd(events, toolTurn, results);
    expect(result.messages).toEqual([user('go'), toolTurn, ...results]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, modelCalls: 1, toolCallsRequested: 2 });

    // The policy answering after the abort starts nothing.
    policyGate.resolve({ verdict: 'continue' });
    await settle();
    expect([approvals, ran, model.calls]).toEqual([[], [], 1]);
  });
});

describe('C5 abort before the turn starts', () => {
  it('C5 abort before the turn starts: abort during the pre-turn policies gives a well-formed aborted turn, the prompt committed, no model call', async () => {
    const policyGate = deferred<{ verdict: 'continue' }>();
    const policyEntered = deferred();
    const model = scriptedModel([{ text: 'never asked' }]);
    const agent = createAgent({
      model,
      policies: {
        preTurn: [
          () => {
            policyEntered.resolve();
            return policyGate.promise;
          },
        ],
      },
      retry: { jitter: false },
    });
    const run = agent.prompt('go');
    await policyEntered.promise;
    agent.abort();
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual(['agentStart', 'turnStart', 'turnEnd', 'agentEnd']);
    expectAbortedEnd(events, null, []);
    expect(result.messages).toEqual([user('go')]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1 });

    policyGate.resolve({ verdict: 'continue' });
    await settle();
    expect([model.calls, model.requests.length]).toEqual([0, 0]);
  });

  it('C5 abort before the turn starts: abort right after prompt(), before the model call, gives an aborted turn with no model call announced', async () => {
    const model = scriptedModel([{ text: 'never asked' }]);
    const agent = createAgent({ model, retry: { jitter: false } });
    const run = agent.prompt('go');
    agent.abort();
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual(['agentStart', 'turnStart', 'turnEnd', 'agentEnd']);
    expectAbortedEnd(events, null, []);
    expect(result.messages).toEqual([user('go')]);
    expect([model.calls, model.requests.length]).toEqual([0, 0]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1 });
  });

  it('C5 abort before the turn starts: a steering message taken for the aborted turn is delivered, never lost', async () => {
    const policyGate = deferred<{ verdict: 'continue' }>();
    const policyEntered = deferred();
    const model = scriptedModel([{ text: 'first answer' }]);
    let blockTurns = false;
    const agent = createAgent({
      model,
      policies: {
        preTurn: [
          () => {
            if (!blockTurns) return { verdict: 'continue' };
            policyEntered.resolve();
            return policyGate.promise;
          },
        ],
      },
      retry: { jitter: false },
    });
    const first = await finished(agent.prompt('go'));
    expect(await agent.steer('change of plan')).toEqual({ status: 'stillQueued' });
    blockTurns = true;
    const run = agent.continue();
    await policyEntered.promise;
    agent.abort();
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual(['agentStart', 'turnStart', 'turnEnd', 'agentEnd']);
    expect(ofType(events, 'turnStart').map((e) => e.turnIndex)).toEqual([1]);
    expect(ofType(events, 'turnEnd').map((e) => [e.turnIndex, e.reason, e.assistant])).toEqual([[1, 'aborted', null]]);
    expect(result.messages).toEqual([
      user('go'),
      assistant([{ type: 'text', text: 'first answer' }], 'stop'),
      user('change of plan'),
    ]);
    expect([result.status, result.endReason]).toEqual(['aborted', 'aborted']);
    expect(agent.snapshot().steeringQueue).toEqual([]);
    expect(model.calls).toBe(1);
    expectInvariants([...first.events, ...events], result.messages);
    // Counters are per agent: the first run's turn and model call, then the aborted turn.
    expectCounters(result.counters, { turns: 2, modelCalls: 1, steeringDelivered: 1 });
  });
});
