import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import {
  createAgent,
  defineTool,
  memoryStore,
  type AgentOptions,
  type AnyTool,
  type Model,
  type SessionStore,
} from 'agentchart';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { expectIdle, expectTrusted, macrotasks, ofType, watchTheProcess } from './harness.js';

// The hostile-input contract, internal errors: a throw inside any effect or machine action ends the run
// failed/fatalError with error.code 'internal', never at the expense of the log: every published
// tool call gets a result, the turn's input is in history, pairing holds (no second messageStart,
// the published reply is not replaced) and the stored session loads again. The throws come from
// hostile objects handed to the public API: getters that work once and throw on a later read.

watchTheProcess();

const PROMPT = 'index the repository';

/** Defines `key` on `target` so that its `okReads` first reads return `value`, every later one throws. */
function throwsAfter<T extends object>(target: T, key: string, value: unknown, okReads: number): T {
  let reads = 0;
  Object.defineProperty(target, key, {
    enumerable: true,
    configurable: true,
    get: () => {
      if (reads++ < okReads) return value;
      throw new Error(`${key} getter exploded`);
    },
  });
  return target;
}

const plainTool = (name: string, execute: () => string | Promise<string> = () => `${name} ok`): AnyTool =>
  ({ ...defineTool({ name, description: name, parameters: z.object({}), execute }) }) as AnyTool;

/** Runs the case on a stored session, checks the trust contract, and loads the session again. */
async function internalFailure(options: Omit<AgentOptions, 'model'> & { model: Model }, clock?: SimulatedClock) {
  const store: SessionStore = memoryStore();
  const agent = createAgent({ ...options, store, sessionId: 'internal' });
  await agent.ready;
  const trusted = await expectTrusted(agent.prompt(PROMPT), [PROMPT], clock);
  expect(trusted.result).toMatchObject({ status: 'failed', endReason: 'fatalError', error: { code: 'internal' } });
  expect(trusted.result.error?.message).toMatch(/^internal error: /);
  // Counted by its code, once, in the result and in agentEnd.
  expect(trusted.result.counters.failureCodes.internal).toBe(1);
  expect(trusted.events.at(-1)).toMatchObject({ type: 'agentEnd', counters: { failureCodes: { internal: 1 } } });
  expectIdle(agent);
  await agent.flush();
  await agent.close();
  // The stored session loads again, its history is the run's, and its stored log pairs.
  const again = createAgent({ model: scriptedModel([]), store, sessionId: 'internal' });
  const { resumedRun } = await again.ready;
  expect(resumedRun).toBeNull();
  expect(again.messages).toEqual(trusted.result.messages);
  const stored = await store.loadEvents('internal');
  expect(checkInvariants(stored, again.messages).violations).toEqual([]);
  return { ...trusted, agent };
}

describe('internal errors keep the log whole and the session loadable', () => {
  it('in pre-turn (the policies getter throws): the prompt is in history, no turn was announced', async () => {
    // Read by the option schema and when the run starts; the pre-turn effect's read throws.
    const policies = throwsAfter({}, 'preTurn', [() => ({ verdict: 'continue' as const })], 2);
    const { result, events } = await internalFailure({ model: scriptedModel([{ text: 'never' }]), policies });
    expect(result.messages).toEqual([{ role: 'user', content: PROMPT }]);
    expect(ofType(events, 'turnStart')).toEqual([]);
  });

  it('in the model call effect (the model name getter throws): the turn ends with turnEnd(error)', async () => {
    const model = throwsAfter(scriptedModel([{ text: 'never' }]), 'name', 'flaky', 1);
    const { events } = await internalFailure({ model });
    expect(ofType(events, 'turnEnd').map((event) => event.reason)).toEqual(['error']);
    expect(ofType(events, 'messageStart')).toHaveLength(ofType(events, 'messageEnd').length);
  });

  it("while streaming 'live' (the pricing getter throws): the shown message is ended, never started twice", async () => {
    const model = throwsAfter(scriptedModel([{ text: 'shown to the user' }]), 'pricing', undefined, 0);
    const { result, events } = await internalFailure({ model, streaming: 'live' });
    expect(ofType(events, 'messageStart')).toHaveLength(1);
    expect(ofType(events, 'messageEnd').map((event) => event.message)).toMatchObject([
      { stopReason: 'error', content: [{ type: 'text', text: 'shown to the user' }] },
    ]);
    expect(result.messages.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'error' });
  });

  it('in a turn effect after the tool-call reply was published: the reply is committed, each call gets a result', async () => {
    // Read by the option schema and when the run starts; the pre-dispatch effect's read throws.
    const policies = throwsAfter({}, 'preDispatch', [() => ({ verdict: 'continue' as const })], 2);
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'c1', name: 'scan' },
          { id: 'c2', name: 'scan' },
        ],
      },
    ]);
    const { result, events } = await internalFailure({ model, tools: [plainTool('scan')], policies });
    expect(ofType(events, 'messageStart')).toHaveLength(1);
    expect(result.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'toolResult']);
    expect(result.messages.slice(2)).toMatchObject([
      { toolCallId: 'c1', isError: true, content: expect.stringMatching(/^not run: internal error/) },
      { toolCallId: 'c2', isError: true, content: expect.stringMatching(/^not run: internal error/) },
    ]);
  });

  it('in a tool call while another call runs (the clock refuses its time limit): the running call still gets a result', async () => {
    let release: () => void = () => {};
    const slow = plainTool('slow', () => new Promise<string>((resolve) => (release = () => resolve('slow ok'))));
    const broken = { ...plainTool('broken'), timeoutMs: 7_000 } as AnyTool;
    const clock = new SimulatedClock();
    const setTimeout = clock.setTimeout.bind(clock);
    clock.setTimeout = (fn: (...args: unknown[]) => void, ms: number) => {
      if (ms === 7_000) throw new Error('clock exploded');
      return setTimeout(fn, ms);
    };
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'slow' },
          { id: 'b', name: 'broken' },
        ],
      },
    ]);
    const { result, events } = await internalFailure(
      { model, tools: [slow, broken], approvalMode: 'bypass', clock },
      clock,
    );
    release();
    await macrotasks(2);
    expect(
      result.messages
        .filter((message) => message.role === 'toolResult')
        .map((message) => message.role === 'toolResult' && message.toolCallId),
    ).toEqual(['a', 'b']);
    expect(
      ofType(events, 'toolExecutionEnd')
        .map((event) => event.toolCallId)
        .sort(),
    ).toEqual(['a', 'b']);
  });

  it('in a master action (the clock refuses the backoff timer): the open turn is closed, the run fails as internal', async () => {
    const clock = new SimulatedClock();
    const setTimeout = clock.setTimeout.bind(clock);
    clock.setTimeout = (fn: (...args: unknown[]) => void, ms: number) => {
      if (ms === 1_000) throw new Error('clock exploded');
      return setTimeout(fn, ms);
    };
    const model = scriptedModel([{ error: { kind: 'overloaded' } }, { text: 'never' }], { clock });
    const { events } = await internalFailure({ model, clock, retry: { jitter: false } }, clock);
    expect(ofType(events, 'turnEnd').map((event) => event.reason)).toEqual(['error']);
  });

  it('in post-turn (the policies getter throws after the commit): the committed turn closes once', async () => {
    const policies = throwsAfter({}, 'postTurn', [() => ({ verdict: 'continue' as const })], 2);
    const { result, events } = await internalFailure({ model: scriptedModel([{ text: 'answer' }]), policies });
    expect(result.messages).toMatchObject([{ role: 'user' }, { role: 'assistant', content: [{ text: 'answer' }] }]);
    expect(ofType(events, 'turnEnd')).toHaveLength(1);
  });

  it('when the run cannot even start (a tool getter throws): prompt() throws InvalidOptions and the agent is not stuck', () => {
    const tool = throwsAfter(plainTool('odd'), 'progress', false, 1);
    const agent = createAgent({ model: scriptedModel([{ text: 'hi' }]), tools: [tool] });
    expect(() => agent.prompt(PROMPT)).toThrow(expect.objectContaining({ code: 'InvalidOptions' }));
    expectIdle(agent);
    expect(agent.messages).toEqual([]);
  });
});

describe('throws inside user code are isolated, not internal errors', () => {
  it("a tool schema whose refine throws on the model's arguments: an invalid-arguments result, the run goes on", async () => {
    const touchy = defineTool({
      name: 'touchy',
      description: 'has a refine that throws',
      parameters: z.object({
        path: z.string().refine(() => {
          throw new Error('refine exploded');
        }),
      }),
      execute: () => 'never',
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'c1', name: 'touchy', arguments: { path: 'x' } }] },
      { text: 'ok' },
    ]);
    const agent = createAgent({ model, tools: [touchy] });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result).toMatchObject({ status: 'completed', counters: { toolCallsInvalid: 1, toolCallsExecuted: 0 } });
    expect(result.messages.find((message) => message.role === 'toolResult')).toMatchObject({
      isError: true,
      content: expect.stringContaining('refine exploded'),
    });
  });
});
