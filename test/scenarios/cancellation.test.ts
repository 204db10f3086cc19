import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { createAgent, defineTool, type AssistantMessage, type Message, type Model, type ModelStreamEvent } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { deferred, expectCounters, expectInvariants, finished, lifecycle, settle } from '../support/harness.js';
import { ofType, toolResult, toolTrace } from './tools-fixtures.js';

/** Steering and cancellation scenarios C1–C5 of SCENARIOS.md, driven through the public API. */

const ABORTED = 'aborted: the run was cancelled before this tool call finished';
const STREAM_HEAD = ['agentStart', 'turnStart', 'beforeModelCall', 'messageStart', 'messageUpdate+', 'messageEnd'];
const ABORTED_TAIL = ['turnEnd', 'agentEnd'];

const noArgs = z.object({});
const instantTool = (name: string, ran: string[] = []) =>
  defineTool({ name, description: `${name} tool`, parameters: noArgs, execute: () => (ran.push(name), `${name} done`) });

const assistant = (content: AssistantMessage['content'], stopReason: AssistantMessage['stopReason'], extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: 'assistant',
  content,
  stopReason,
  model: 'scripted',
  ...extra,
});
const call = (id: string, name: string, args: Record<string, unknown> = {}) => ({ type: 'toolCall' as const, id, name, arguments: args });

function expectAbortedEnd(events: Parameters<typeof ofType>[0], turnAssistant: AssistantMessage | null, toolResults: Message[]): void {
  const turnEnds = ofType(events, 'turnEnd');
  expect(turnEnds.map((e) => [e.turnIndex, e.reason, e.assistant, e.toolResults])).toEqual([[0, 'aborted', turnAssistant, toolResults]]);
  const agentEnd = ofType(events, 'agentEnd')[0];
  expect([agentEnd?.status, agentEnd?.endReason]).toEqual(['aborted', 'aborted']);
}

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
    const partial = assistant([{ type: 'text', text: 'Let me check' }, call('c1', 'lookup')], 'aborted', { usage: { input: 7, output: 2 } });
    expect(ofType(events, 'messageEnd').map((e) => e.message)).toEqual([partial]);
    const results = [toolResult('c1', 'lookup', ABORTED, true)];
    expect(toolTrace(events)).toEqual(['end:c1!']);
    expectAbortedEnd(events, partial, results);
    expect([result.status, result.endReason]).toEqual(['aborted', 'aborted']);
    expect(result.messages).toEqual([{ role: 'user', content: 'go' }, partial, ...results]);
    expect(ran).toEqual([]);
    expect(model.calls).toBe(1);
    expect(model.requests).toHaveLength(1);
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

    expect(lifecycle(events)).toEqual(['agentStart', 'turnStart', 'beforeModelCall', 'messageStart', 'messageEnd', ...ABORTED_TAIL]);
    const empty = assistant([], 'aborted');
    expect(ofType(events, 'messageEnd').map((e) => e.message)).toEqual([empty]);
    expectAbortedEnd(events, empty, []);
    expect(result.messages).toEqual([{ role: 'user', content: 'go' }, empty]);
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
        return { [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<ModelStreamEvent>>(() => {}) }) };
      },
    };
    const agent = createAgent({ model: deaf, retry: { jitter: false } });
    const run = agent.prompt('go');
    await settle();
    agent.abort();
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual(['agentStart', 'turnStart', 'beforeModelCall', 'messageStart', 'messageEnd', ...ABORTED_TAIL]);
    const empty = assistant([], 'aborted', { model: 'deaf' });
    expectAbortedEnd(events, empty, []);
    expect(result.messages).toEqual([{ role: 'user', content: 'go' }, empty]);
    expect(providerSignal?.aborted).toBe(true);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, modelCalls: 1 });
  });
});

describe('C3 abort during tool execution', () => {
  it('C3 abort during tool execution: a tool that ignores its signal does not hold the turn; the finished call keeps its result, the other gets aborted', async () => {
    const stubbornResult = deferred<string>();
    const stubbornStarted = deferred();
    let stubbornSignal: AbortSignal | undefined;
    const stubborn = defineTool({
      name: 'stubborn',
      description: 'ignores its signal',
      parameters: noArgs,
      execute: (_args, ctx) => {
        stubbornSignal = ctx.signal;
        stubbornStarted.resolve();
        return stubbornResult.promise;
      },
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'c1', name: 'fast' }, { id: 'c2', name: 'stubborn' }], usage: { input: 4, output: 6 } }]);
    const agent = createAgent({ model, tools: [instantTool('fast'), stubborn], retry: { jitter: false } });
    const run = agent.prompt('go');
    await stubbornStarted.promise;
    await settle(); // the fast call has finished
    agent.abort();
    const { result, events } = await finished(run); // resolves while the stubborn tool still runs

    expect(lifecycle(events)).toEqual([...STREAM_HEAD, 'toolExecutionStart', 'toolExecutionStart', 'toolExecutionEnd', 'toolExecutionEnd', ...ABORTED_TAIL]);
    expect(toolTrace(events)).toEqual(['start:c1', 'start:c2', 'end:c1', 'end:c2!']);
    const toolTurn = assistant([call('c1', 'fast'), call('c2', 'stubborn')], 'toolUse', { usage: { input: 4, output: 6 } });
    const results = [toolResult('c1', 'fast', 'fast done'), toolResult('c2', 'stubborn', ABORTED, true)];
    expectAbortedEnd(events, toolTurn, results);
    expect(result.messages).toEqual([{ role: 'user', content: 'go' }, toolTurn, ...results]);
    expect(stubbornSignal?.aborted).toBe(true);
    expect(model.calls).toBe(1);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, modelCalls: 1, toolCallsRequested: 2, toolCallsExecuted: 2, toolCallsFailed: 1, tokensIn: 4, tokensOut: 6 });

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
    const started = deferred();
    const hanging = defineTool({
      name: 'hanging',
      description: 'never finishes',
      parameters: noArgs,
      execute: () => {
        started.resolve();
        return new Promise<string>(() => {});
      },
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'c1', name: 'hanging' }, { id: 'c2', name: 'queued' }] }]);
    const agent = createAgent({ model, tools: [hanging, instantTool('queued', ran)], toolExecution: { concurrency: 1 }, retry: { jitter: false } });
    const run = agent.prompt('go');
    await started.promise;
    agent.abort();
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual([...STREAM_HEAD, 'toolExecutionStart', 'toolExecutionEnd', 'toolExecutionEnd', ...ABORTED_TAIL]);
    expect(toolTrace(events)).toEqual(['start:c1', 'end:c1!', 'end:c2!']);
    const toolTurn = assistant([call('c1', 'hanging'), call('c2', 'queued')], 'toolUse');
    const results = [toolResult('c1', 'hanging', ABORTED, true), toolResult('c2', 'queued', ABORTED, true)];
    expectAbortedEnd(events, toolTurn, results);
    expect(result.messages).toEqual([{ role: 'user', content: 'go' }, toolTurn, ...results]);
    expect(ran).toEqual([]);
    expect(model.calls).toBe(1);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, modelCalls: 1, toolCallsRequested: 2, toolCallsExecuted: 1, toolCallsFailed: 1 });
  });
});

describe('C4 abort in the tool phases', () => {
  it('C4 abort during pre-dispatch: no approval starts, no tool starts, every call gets an aborted result', async () => {
    const ran: string[] = [];
    const approvals: string[] = [];
    const policyGate = deferred<{ verdict: 'continue' }>();
    const policyEntered = deferred();
    const guarded = defineTool({ name: 'guarded', description: 'needs approval', parameters: noArgs, requiresApproval: true, execute: () => (ran.push('guarded'), 'ran') });
    const model = scriptedModel([{ toolCalls: [{ id: 'c1', name: 'guarded' }, { id: 'c2', name: 'guarded' }] }]);
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
    expect(result.messages).toEqual([{ role: 'user', content: 'go' }, toolTurn, ...results]);
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
    expect(result.messages).toEqual([{ role: 'user', content: 'go' }]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1 });

    policyGate.resolve({ verdict: 'continue' });
    await settle();
    expect([model.calls, model.requests.length]).toEqual([0, 0]);
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
      { role: 'user', content: 'go' },
      assistant([{ type: 'text', text: 'first answer' }], 'stop'),
      { role: 'user', content: 'change of plan' },
    ]);
    expect([result.status, result.endReason]).toEqual(['aborted', 'aborted']);
    expect(agent.snapshot().steeringQueue).toEqual([]);
    expect(model.calls).toBe(1);
    expectInvariants([...first.events, ...events], result.messages);
    // Counters are per agent: the first run's turn and model call, then the aborted turn.
    expectCounters(result.counters, { turns: 2, modelCalls: 1, steeringDelivered: 1 });
  });
});
