import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import {
  createAgent,
  defineTool,
  memoryStore,
  type Agent,
  type AgentOptions,
  type AgentRun,
  type SessionStore,
} from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import {
  expectIdle,
  expectTrusted,
  logOf,
  macrotask,
  macrotasks,
  ofType,
  rawModel,
  settledFlag,
  watchTheProcess,
} from './harness.js';

// The hostile-input contract, abort reaches every await: every wait on user code (model stream, tools, policies,
// approval handler, context transform) races the run's signal, so run.result settles within one
// macrotask after abort() whatever the user code does; abort(reason)'s reason is in
// result.error.message and in agentEnd.

watchTheProcess();

const PROMPT = 'do the slow thing';
const forever = () => new Promise<never>(() => {});

/** Waits until the user code under test was reached, aborts, and asserts the result settled within one macrotask. */
async function abortWhileStuck(
  agent: Agent,
  run: AgentRun,
  reached: () => boolean,
  reason: unknown,
  clock?: SimulatedClock,
) {
  for (let i = 0; i < 50 && !reached(); i++) await macrotask();
  expect(reached(), 'the run reached the user code under test').toBe(true);
  const flag = settledFlag(run.result);
  agent.abort(reason as string);
  await macrotask();
  expect(flag.settled, 'run.result settled within one macrotask after abort()').toBe(true);
  const trusted = await expectTrusted(run, [PROMPT], clock);
  expect(trusted.result.status).toBe('aborted');
  expectIdle(agent);
  return trusted;
}

const TOOL_CALL = { toolCalls: [{ id: 'c1', name: 'slow', arguments: {} }] };

function stuckTool(reached: { value: boolean }) {
  return defineTool({
    name: 'slow',
    description: 'never finishes and ignores its signal',
    parameters: z.object({}),
    execute: () => {
      reached.value = true;
      return forever();
    },
  });
}

describe('abort() wins against user code that never settles', () => {
  const cases: Array<[string, (reached: { value: boolean }) => Partial<AgentOptions> & Pick<AgentOptions, 'model'>]> = [
    [
      'a model stream that ignores its signal',
      (reached) => ({
        model: rawModel([
          () => ({ [Symbol.asyncIterator]: () => ({ next: () => ((reached.value = true), forever()) }) }),
        ]),
      }),
    ],
    [
      'a tool that ignores its signal',
      (reached) => ({ model: scriptedModel([TOOL_CALL]), tools: [stuckTool(reached)] }),
    ],
    [
      'a pre-turn policy',
      (reached) => ({
        model: scriptedModel([{ text: 'never' }]),
        policies: { preTurn: [() => ((reached.value = true), forever())] },
      }),
    ],
    [
      'a pre-dispatch policy',
      (reached) => ({
        model: scriptedModel([TOOL_CALL]),
        tools: [stuckTool({ value: false })],
        policies: { preDispatch: [() => ((reached.value = true), forever())] },
      }),
    ],
    [
      'a post-turn policy',
      (reached) => ({
        model: scriptedModel([{ text: 'answer' }]),
        policies: { postTurn: [() => ((reached.value = true), forever())] },
      }),
    ],
    [
      'a post-loop policy',
      (reached) => ({
        model: scriptedModel([{ text: 'answer' }]),
        policies: { postLoop: [() => ((reached.value = true), forever())] },
      }),
    ],
    [
      'an approval handler that ignores its signal',
      (reached) => ({
        model: scriptedModel([TOOL_CALL]),
        tools: [stuckTool({ value: false })],
        approvalMode: 'always',
        approval: () => ((reached.value = true), forever()),
      }),
    ],
    [
      'a context transform before the model call',
      (reached) => ({
        model: scriptedModel([{ text: 'never' }]),
        context: { maxTokens: 10_000, transform: () => ((reached.value = true), forever()) },
      }),
    ],
    [
      'a context transform during overflow recovery',
      (reached) => ({
        model: scriptedModel([{ error: { kind: 'contextOverflow' } }, { text: 'never' }]),
        context: { transform: (messages, { overflow }) => (overflow ? ((reached.value = true), forever()) : messages) },
      }),
    ],
  ];

  it.each(cases)('%s: the result settles within a macrotask, with the reason', async (_name, options) => {
    const reached = { value: false };
    const agent = createAgent(options(reached));
    const run = agent.prompt(PROMPT);
    const { result, events } = await abortWhileStuck(agent, run, () => reached.value, 'user pressed stop');
    expect(result.error).toEqual({ code: 'aborted', message: 'user pressed stop' });
    expect(ofType(events, 'agentEnd')[0]?.error).toEqual({ code: 'aborted', message: 'user pressed stop' });
    // The agent takes a new prompt: nothing is left holding it.
    expect(() => agent.steer('still there?')).not.toThrow();
  });

  it('a durable approval waiting for resolveApproval: withdrawn on abort, nothing left pending', async () => {
    const agent = createAgent({
      model: scriptedModel([TOOL_CALL]),
      tools: [stuckTool({ value: false })],
      approvalMode: 'always',
      store: memoryStore(),
      sessionId: 's',
    });
    await agent.ready;
    const run = agent.prompt(PROMPT);
    const { events } = await abortWhileStuck(
      agent,
      run,
      () => agent.pendingApprovals().length === 1,
      'user pressed stop',
    );
    expect(ofType(events, 'toolApprovalResolved').map((event) => event.approved)).toEqual([false]);
    expect(agent.pendingApprovals()).toEqual([]);
  });

  it('during a backoff on the simulated clock', async () => {
    const clock = new SimulatedClock();
    const agent = createAgent({
      model: scriptedModel([{ error: { kind: 'overloaded' } }, { text: 'never' }], { clock }),
      clock,
    });
    const run = agent.prompt(PROMPT);
    const { events } = await abortWhileStuck(
      agent,
      run,
      () => agent.running && agent.counters.modelCalls === 1,
      'no more retries',
      clock,
    );
    expect(ofType(events, 'agentEnd')[0]?.error?.message).toBe('no more retries');
  });

  it('during the steering grace, with a tool that ignores its signal', async () => {
    const clock = new SimulatedClock();
    const reached = { value: false };
    const agent = createAgent({
      model: scriptedModel([TOOL_CALL, { text: 'never' }]),
      tools: [stuckTool(reached)],
      clock,
    });
    const run = agent.prompt(PROMPT);
    for (let i = 0; i < 20 && !reached.value; i++) await macrotask();
    void agent.steer('change of plan');
    const { result } = await abortWhileStuck(agent, run, () => reached.value, 'user pressed stop', clock);
    expect(result.messages.find((message) => message.role === 'toolResult')).toMatchObject({ isError: true });
    expect(agent.snapshot().steeringQueue).toEqual([{ role: 'user', content: 'change of plan' }]);
  });
});

describe('the abort reason', () => {
  it.each([
    ['no reason', undefined, 'aborted'],
    ['an empty string', '', 'aborted'],
    ['an Error', new Error('deadline passed'), 'deadline passed'],
    ['a number', 42, '42'],
    ['an object', { why: 'because' }, '[object Object]'],
  ])('%s → result.error.message %j', async (_name, reason, message) => {
    const reached = { value: false };
    const agent = createAgent({ model: scriptedModel([TOOL_CALL]), tools: [stuckTool(reached)] });
    const { result } = await abortWhileStuck(agent, agent.prompt(PROMPT), () => reached.value, reason);
    expect(result.error).toEqual({ code: 'aborted', message });
  });

  it('a second abort() is harmless: the first reason stays', async () => {
    const reached = { value: false };
    const agent = createAgent({ model: scriptedModel([TOOL_CALL]), tools: [stuckTool(reached)] });
    const run = agent.prompt(PROMPT);
    for (let i = 0; i < 20 && !reached.value; i++) await macrotask();
    agent.abort('first');
    agent.abort('second');
    const { result } = await expectTrusted(run, [PROMPT]);
    expect(result.error).toEqual({ code: 'aborted', message: 'first' });
  });

  it('abort() from a subscriber of turnStart ends the run before the model is called', async () => {
    const model = scriptedModel([{ text: 'never' }]);
    const agent = createAgent({ model });
    agent.events.subscribe((event) => event.type === 'turnStart' && agent.abort('from a subscriber'));
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result).toMatchObject({ status: 'aborted', error: { message: 'from a subscriber' } });
    expect(model.calls).toBe(0);
  });

  it('abort() when nothing runs does nothing (and throws nothing)', async () => {
    const agent = createAgent({ model: scriptedModel([{ text: 'hi' }]) });
    expect(() => agent.abort('idle')).not.toThrow();
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result.status).toBe('completed');
  });
});

describe('store calls never hold a run', () => {
  // Every step is written before the run ends — so a store that never answers holds the
  // result, and abort() (it reaches every await) is what ends the wait; flush() stays the wait on the store itself.
  it('a store whose commitStep never settles: the result waits for the last step; abort() ends the wait', async () => {
    const inner = memoryStore();
    const store: SessionStore = { ...inner, commitStepSync: undefined, commitStep: () => forever() };
    const agent = createAgent({ model: scriptedModel([{ text: 'answer' }]), store, sessionId: 'stuck' });
    await agent.ready;
    const run = agent.prompt(PROMPT);
    const settled = settledFlag(run.result);
    await macrotasks(5);
    expect(settled.settled).toBe(false);
    agent.abort('the store is stuck');
    await macrotask();
    expect(settled.settled).toBe(true);
    const result = await run.result;
    expect(result.status).toBe('completed');
    expect(result.messages).toMatchObject([{ role: 'user', content: PROMPT }, { role: 'assistant' }]);
    // What a subscriber sees is stored first: the store never stored a step, so nothing was published.
    expect(logOf(run)).toEqual([]);
    expect(settledFlag(agent.flush()).settled).toBe(false);
    await macrotasks(2);
  });
});
