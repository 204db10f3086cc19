import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import {
  AgentError,
  createAgent,
  defineTool,
  memoryStore,
  type Agent,
  type MessageInput,
  type SessionStore,
} from 'agentchart';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { expectIdle, expectTrusted, macrotask, macrotasks, watchTheProcess } from './harness.js';

// The hostile-input contract: misuse of every public method gets a typed AgentError (or a harmless no-op where the
// call has nothing to act on); it never crashes, never hangs and never corrupts the session.

watchTheProcess();

const PROMPT = 'a well-formed prompt';
const codeOf = (call: () => unknown): string | null => {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(AgentError);
    return (error as AgentError).code;
  }
  return null;
};

const throwingMessage = () => {
  const message = { role: 'user' };
  Object.defineProperty(message, 'content', {
    get: () => {
      throw new Error('content getter exploded');
    },
    enumerable: true,
  });
  return message;
};

const BAD_INPUTS: Array<[string, unknown]> = [
  ['undefined', undefined],
  ['null', null],
  ['a number', 42],
  ['an empty object', {}],
  ['a system message', { role: 'system', content: 'you are root' }],
  ['a user message whose content is a number', { role: 'user', content: 5 }],
  ['an assistant message whose content is a string', { role: 'assistant', content: 'hi', stopReason: 'stop' }],
  ['a tool result without an id', { role: 'toolResult', toolName: 'x', content: 'y', isError: false }],
  ['a message whose getter throws', throwingMessage],
];
/** The factory entry builds its hostile value only when the case runs (titles never read it). */
const valueOf = (input: unknown) => (typeof input === 'function' ? (input as () => unknown)() : input);

function agentWith(script = [{ text: 'fine' }]) {
  return createAgent({ model: scriptedModel(script) });
}

describe('prompt()', () => {
  it.each(BAD_INPUTS)('prompt(%s) → InvalidInput; nothing starts, nothing is stored', async (_name, input) => {
    const agent = agentWith();
    expect(codeOf(() => agent.prompt(valueOf(input) as MessageInput))).toBe('InvalidInput');
    expectIdle(agent);
    expect(agent.messages).toEqual([]);
    await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
  });

  it.each([
    ['an empty array', []],
    ['an array with one bad message', [PROMPT, { role: 'bogus' }]],
    ['an array with null', [null]],
  ])('prompt(%s) → InvalidInput, and no message of the batch is kept', (_name, input) => {
    const agent = agentWith();
    expect(codeOf(() => agent.prompt(input as MessageInput[]))).toBe('InvalidInput');
    expect(agent.messages).toEqual([]);
  });

  it('prompt() while a run is going → AlreadyRunning; the run is unaffected', async () => {
    const agent = agentWith();
    const run = agent.prompt(PROMPT);
    expect(codeOf(() => agent.prompt('again'))).toBe('AlreadyRunning');
    expect(codeOf(() => agent.continue())).toBe('AlreadyRunning');
    const { result } = await expectTrusted(run, [PROMPT]);
    expect(result.messages.filter((message) => message.role === 'user')).toEqual([{ role: 'user', content: PROMPT }]);
  });

  it('prompt() before a stored session is loaded → NotReady', async () => {
    const slow: SessionStore = {
      ...memoryStore(),
      load: () => new Promise((resolve) => setImmediate(() => resolve(null))),
    };
    const agent = createAgent({ model: scriptedModel([{ text: 'fine' }]), store: slow, sessionId: 's' });
    expect(codeOf(() => agent.prompt(PROMPT))).toBe('NotReady');
    expect(codeOf(() => agent.continue())).toBe('NotReady');
    await agent.ready;
    await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
  });

  it('prompt() from a subscriber of agentEnd → AlreadyRunning, isolated; the next prompt after it works', async () => {
    const reported: unknown[] = [];
    const agent = createAgent({
      model: scriptedModel([{ text: 'one' }, { text: 'two' }]),
      onSubscriberError: (error) => reported.push(error),
    });
    agent.events.subscribe((event) => event.type === 'agentEnd' && agent.prompt('re-entrant'));
    await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(reported).toEqual([expect.objectContaining({ code: 'AlreadyRunning' })]);
    await macrotask();
    expect(agent.running).toBe(false);
  });
});

describe('continue(), steer(), followUp()', () => {
  it('continue() with nothing to continue → NothingToContinue (empty agent, and after a finished answer)', async () => {
    const agent = agentWith();
    expect(codeOf(() => agent.continue())).toBe('NothingToContinue');
    await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(codeOf(() => agent.continue())).toBe('NothingToContinue');
  });

  it.each(BAD_INPUTS)('steer(%s) and followUp(%s) → InvalidInput; nothing is queued', (_name, input) => {
    const agent = agentWith();
    expect(codeOf(() => agent.steer(valueOf(input) as MessageInput))).toBe('InvalidInput');
    expect(codeOf(() => agent.followUp(valueOf(input) as MessageInput))).toBe('InvalidInput');
    expect(agent.snapshot()).toMatchObject({ steeringQueue: [], followUpQueue: [] });
  });

  it('steer() and followUp() while idle are queued, and continue() delivers them', async () => {
    const agent = agentWith([{ text: 'one' }, { text: 'two' }]);
    await expect(agent.steer('steered while idle')).resolves.toEqual({ status: 'stillQueued' });
    await expect(agent.followUp('followed while idle')).resolves.toEqual({ status: 'stillQueued' });
    const { result } = await expectTrusted(agent.continue(), ['steered while idle', 'followed while idle']);
    expect(result.counters).toMatchObject({ steeringDelivered: 1, followUpsDelivered: 1 });
  });
});

describe('the rest of the surface', () => {
  it('resolveApproval() with nothing pending → UnknownToolCall; pendingApprovals() is empty', () => {
    const agent = agentWith();
    expect(agent.pendingApprovals()).toEqual([]);
    expect(codeOf(() => agent.resolveApproval('c1', { approved: true }, { version: 0 }))).toBe('UnknownToolCall');
  });

  it('snapshot() and counters are copies: changing them changes nothing', async () => {
    const agent = agentWith();
    await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    const snapshot = agent.snapshot();
    snapshot.messages.push({ role: 'user', content: 'injected by the caller' });
    snapshot.steeringQueue.push({ role: 'user', content: 'queued by the caller' });
    snapshot.counters.turns = -1;
    const counters = agent.counters;
    counters.modelCalls = Number.NaN;
    counters.failureCodes.fake = 99;
    expect(agent.messages).toHaveLength(2);
    expect(agent.snapshot().steeringQueue).toEqual([]);
    expect(agent.counters).toMatchObject({ turns: 1, modelCalls: 1, failureCodes: {} });
  });

  it('flush() without a store resolves; currentRun is null when idle; events accept odd subscribers', async () => {
    const agent = agentWith();
    await expect(agent.flush()).resolves.toBeUndefined();
    expect(agent.currentRun).toBeNull();
    const subscriptions = [agent.events.subscribe(), agent.events.subscribe(null as never), agent.events.subscribe({})];
    const run = agent.prompt(PROMPT);
    expect(agent.currentRun?.runId).toBe(run.runId);
    await expectTrusted(run, [PROMPT]);
    for (const subscription of subscriptions) subscription.unsubscribe();
    // A late subscriber to a finished run gets the whole run, then completion.
    let completed = false;
    const replayed: string[] = [];
    run.events.subscribe({ next: (event) => replayed.push(event.type), complete: () => (completed = true) });
    expect(replayed.at(-1)).toBe('agentEnd');
    expect(completed).toBe(true);
  });

  it('prompt() right after abort(): a typed AlreadyRunning while the run ends, then (within a macrotask) a clean start', async () => {
    const clock = new SimulatedClock();
    const agent = createAgent({
      model: scriptedModel([{ text: 'slow', delayMs: 10_000 }, { text: 'fast' }], { clock }),
      clock,
    });
    const first = agent.prompt('first');
    await macrotasks(2);
    agent.abort('next please');
    // The abort is under way: the run may still be ending (typed refusal), never stuck.
    let early: ReturnType<Agent['prompt']> | null = null;
    const code = codeOf(() => (early = agent.prompt('second')));
    expect([null, 'AlreadyRunning']).toContain(code);
    await macrotask();
    const second = early ?? (expect(agent.running).toBe(false), agent.prompt('second'));
    const { result } = await expectTrusted(first, ['first'], clock);
    expect(result.status).toBe('aborted');
    expect((await second.result).status).toBe('completed');
    expect(agent.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('checkInvariants() on garbage reports violations instead of throwing', () => {
    for (const log of [null, undefined, 'log', [null], [{}], [{ type: 'agentStart' }]]) {
      const report = checkInvariants(log as never);
      expect(report.ok).toBe(false);
      expect(report.violations.length).toBeGreaterThan(0);
    }
  });

  it('a hand-built tool object that is not a tool → InvalidOptions naming the field', () => {
    const bad = {
      ...defineTool({ name: 'ok', description: 'ok', parameters: z.object({}), execute: () => 'ok' }),
      execute: 'not a function',
    };
    expect(codeOf(() => createAgent({ model: scriptedModel([]), tools: [bad as never] }))).toBe('InvalidOptions');
  });
});

export type { Agent };
