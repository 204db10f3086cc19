import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import {
  AgentError,
  createAgent,
  defineTool,
  memoryStore,
  type AgentOptions,
  type ApprovalDecision,
  type Message,
} from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectTrusted, macrotasks, ofType, watchTheProcess } from './harness.js';

// The hostile-input contract, decisions and verdicts: an approval decision is exactly { approved: true },
// { approved: true, arguments } or { approved: false, reason? } with a boolean `approved`. From an
// approval handler anything else is a denial (an error result and a policyError); to
// resolveApproval anything else throws InvalidInput and the approval stays pending. A policy
// verdict that is not one of its slot's shapes is a policyError counted as continue; a refused
// context.transform result is a policyError (slot contextTransform), then the default compaction.

watchTheProcess();

const PROMPT = 'clean up the build folder';

function guardedTool() {
  const runs: unknown[] = [];
  const tool = defineTool({
    name: 'remove',
    description: 'removes a path',
    parameters: z.object({ path: z.string() }),
    requiresApproval: true,
    execute: (args) => {
      runs.push(args);
      return `removed ${args.path}`;
    },
  });
  return { tool, runs };
}

const CALL_THEN_TEXT = () =>
  scriptedModel([{ toolCalls: [{ id: 'c1', name: 'remove', arguments: { path: 'build' } }] }, { text: 'done' }]);

const hostileArguments = () => {
  const decision = { approved: true };
  Object.defineProperty(decision, 'arguments', {
    get: () => {
      throw new Error('arguments getter exploded');
    },
    enumerable: true,
  });
  return decision;
};

const GARBAGE_DECISIONS: Array<[string, () => unknown]> = [
  ["the string 'yes'", () => 'yes'],
  ['null', () => null],
  ['undefined', () => undefined],
  ["{ approved: 'true' } (a form field)", () => ({ approved: 'true' })],
  ["{ approved: 'false' } (a form field)", () => ({ approved: 'false' })],
  ['{ approved: 1 }', () => ({ approved: 1 })],
  ['{ approved: true, arguments: a string }', () => ({ approved: true, arguments: 'rm -rf /' })],
  ['{ approved: false, reason: 5 }', () => ({ approved: false, reason: 5 })],
  ['{ approved: true } with an unknown key', () => ({ approved: true, confirmedBy: 'bob' })],
  ['an arguments getter that throws', hostileArguments],
  ['[true]', () => [true]],
];

describe('an approval handler that answers garbage: a denial, never a run', () => {
  it.each(GARBAGE_DECISIONS)(
    '%s → error result, policyError(approval), the tool never runs',
    async (_name, decision) => {
      const { tool, runs } = guardedTool();
      const agent = createAgent({
        model: CALL_THEN_TEXT(),
        tools: [tool],
        approval: () => decision() as ApprovalDecision,
      });
      const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
      expect(runs).toEqual([]);
      expect(result.status).toBe('completed');
      expect(result.messages.find((message) => message.role === 'toolResult')).toMatchObject({
        toolCallId: 'c1',
        isError: true,
        content: expect.stringMatching(/^approval failed: /),
      });
      expect(ofType(events, 'policyError').map((event) => event.slot)).toEqual(['approval']);
      expect(ofType(events, 'toolApprovalResolved').map((event) => event.approved)).toEqual([false]);
      expect(result.counters).toMatchObject({
        approvalsRequested: 1,
        approvalsDenied: 1,
        toolCallsRejected: 1,
        toolCallsExecuted: 0,
      });
    },
  );

  it.each([
    [
      'throws',
      () => {
        throw new Error('handler exploded');
      },
    ],
    ['rejects', () => Promise.reject(new Error('handler rejected'))],
    ['rejects with a non-Error', () => Promise.reject(42)],
  ])('a handler that %s → a denial with its reason, the tool never runs', async (_name, handler) => {
    const { tool, runs } = guardedTool();
    const agent = createAgent({
      model: CALL_THEN_TEXT(),
      tools: [tool],
      approval: handler as AgentOptions['approval'],
    });
    const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(runs).toEqual([]);
    expect(ofType(events, 'policyError')).toHaveLength(1);
    expect(result.counters.approvalsDenied).toBe(1);
  });

  it('the three valid shapes do what they say', async () => {
    const decisions: ApprovalDecision[] = [
      { approved: true },
      { approved: true, arguments: { path: 'dist' } },
      { approved: false, reason: 'not today' },
    ];
    for (const decision of decisions) {
      const { tool, runs } = guardedTool();
      const agent = createAgent({ model: CALL_THEN_TEXT(), tools: [tool], approval: () => decision });
      const { events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
      expect(ofType(events, 'policyError')).toEqual([]);
      expect(runs).toEqual(decision.approved ? [{ path: 'arguments' in decision ? 'dist' : 'build' }] : []);
    }
  });

  it('approved arguments the tool schema refuses (a refine that throws) are a denial, not an internal error', async () => {
    const runs: unknown[] = [];
    const tool = defineTool({
      name: 'remove',
      description: 'removes a path',
      parameters: z.object({
        path: z.string().refine((path) => {
          if (path === '/') throw new Error('refine exploded');
          return true;
        }),
      }),
      requiresApproval: true,
      execute: (args) => (runs.push(args), 'removed'),
    });
    const agent = createAgent({
      model: CALL_THEN_TEXT(),
      tools: [tool],
      approval: () => ({ approved: true, arguments: { path: '/' } }),
    });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(runs).toEqual([]);
    expect(result.status).toBe('completed');
    expect(result.messages.find((message) => message.role === 'toolResult')).toMatchObject({
      isError: true,
      content: expect.stringContaining('refine exploded'),
    });
  });
});

describe('resolveApproval with garbage: InvalidInput, and the approval stays pending', () => {
  async function pendingSession() {
    const { tool, runs } = guardedTool();
    const agent = createAgent({ model: CALL_THEN_TEXT(), tools: [tool], store: memoryStore(), sessionId: 'approvals' });
    await agent.ready;
    const run = agent.prompt(PROMPT);
    await macrotasks(3);
    const [pending] = agent.pendingApprovals();
    expect(pending).toMatchObject({ toolCallId: 'c1', toolName: 'remove' });
    return { agent, run, runs, pending: pending! };
  }

  it.each(GARBAGE_DECISIONS)(
    '%s → InvalidInput; pending; a later valid decision still counts',
    async (_name, decision) => {
      const { agent, run, runs, pending } = await pendingSession();
      expect(() => agent.resolveApproval('c1', decision() as ApprovalDecision, { version: pending.version })).toThrow(
        expect.objectContaining({ code: 'InvalidInput' }),
      );
      await macrotasks(2);
      expect(runs).toEqual([]);
      expect(agent.pendingApprovals()).toEqual([pending]);
      agent.resolveApproval('c1', { approved: false, reason: 'no' }, { version: pending.version });
      const { result } = await expectTrusted(run, [PROMPT]);
      expect(runs).toEqual([]);
      expect(result.messages.find((message) => message.role === 'toolResult')).toMatchObject({
        content: 'rejected: no',
      });
    },
  );

  it.each([
    [
      'no options',
      (agent: { resolveApproval: (...args: never[]) => void }) =>
        (agent.resolveApproval as (...args: unknown[]) => void)('c1', { approved: true }),
    ],
    [
      'a version that is a string',
      (agent: { resolveApproval: (...args: never[]) => void }) =>
        (agent.resolveApproval as (...args: unknown[]) => void)('c1', { approved: true }, { version: '3' }),
    ],
    [
      'a tool call id that is a number',
      (agent: { resolveApproval: (...args: never[]) => void }) =>
        (agent.resolveApproval as (...args: unknown[]) => void)(1, { approved: true }, { version: 0 }),
    ],
  ])('%s → InvalidInput; the approval stays pending', async (_name, misuse) => {
    const { agent, run, runs, pending } = await pendingSession();
    expect(() => misuse(agent as never)).toThrow(expect.objectContaining({ code: 'InvalidInput' }));
    expect(agent.pendingApprovals()).toEqual([pending]);
    agent.resolveApproval('c1', { approved: true }, { version: pending.version });
    await expectTrusted(run, [PROMPT]);
    expect(runs).toEqual([{ path: 'build' }]);
  });

  it('a stale version and an unknown call are refused with their own codes', async () => {
    const { agent, run, pending } = await pendingSession();
    expect(() => agent.resolveApproval('c1', { approved: true }, { version: pending.version + 7 })).toThrow(
      expect.objectContaining({ code: 'StaleVersion' }),
    );
    expect(() => agent.resolveApproval('c9', { approved: true }, { version: pending.version })).toThrow(
      expect.objectContaining({ code: 'UnknownToolCall' }),
    );
    agent.abort('tidy up');
    const { result } = await expectTrusted(run, [PROMPT]);
    expect(result.error).toEqual({ code: 'aborted', message: 'tidy up' });
  });
});

const injectGarbage = (messages: unknown) => ({ verdict: 'inject', messages });
const throwingVerdict = () => {
  const verdict = {};
  Object.defineProperty(verdict, 'verdict', {
    get: () => {
      throw new Error('verdict getter exploded');
    },
    enumerable: true,
  });
  return verdict;
};

const GARBAGE_VERDICTS: Array<[string, () => unknown]> = [
  ['null', () => null],
  ["the string 'stop'", () => 'stop'],
  ['stop without a reason', () => ({ verdict: 'stop' })],
  ['an unknown verdict', () => ({ verdict: 'halt', reason: 'x' })],
  ['inject with a message of an unknown role', () => injectGarbage([{ role: 'bogus', content: 'x' }])],
  ['inject with messages that are not an array', () => injectGarbage('note')],
  ['inject with a null message', () => injectGarbage([null])],
  ['a verdict whose getter throws', throwingVerdict],
];

type Slot = 'preTurn' | 'preDispatch' | 'postTurn' | 'postLoop';
const SLOT_EXTRAS: Record<Slot, Array<[string, () => unknown]>> = {
  preTurn: [],
  preDispatch: [
    ['skip without a reason', () => ({ verdict: 'skip' })],
    ['a rewrite whose arguments are not an object', () => ({ verdict: 'continue', arguments: 5 })],
    ['a misspelled rewrite (argumnets)', () => ({ verdict: 'continue', argumnets: { path: '/' } })],
  ],
  postTurn: [
    [
      'replace with a message that is not an assistant message',
      () => ({ verdict: 'replace', assistant: { role: 'user', content: 'hijacked' } }),
    ],
  ],
  postLoop: [],
};

describe('policy verdicts of the wrong shape: a policyError counted as continue', () => {
  const SLOTS: Slot[] = ['preTurn', 'preDispatch', 'postTurn', 'postLoop'];
  const cases = SLOTS.flatMap((slot) =>
    [...GARBAGE_VERDICTS, ...SLOT_EXTRAS[slot]].map(([name, verdict]) => [slot, name, verdict] as const),
  );

  it.each(cases)('%s: %s', async (slot, _name, verdict) => {
    const runs: unknown[] = [];
    const tool = defineTool({
      name: 'remove',
      description: 'removes',
      parameters: z.object({ path: z.string() }),
      execute: (args) => (runs.push(args), 'removed'),
    });
    let calls = 0;
    const policy = () => (calls++ === 0 ? verdict() : { verdict: 'continue' });
    const agent = createAgent({
      model: CALL_THEN_TEXT(),
      tools: [tool],
      policies: { [slot]: [policy] } as AgentOptions['policies'],
    });
    const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(ofType(events, 'policyError').map((event) => event.slot)).toEqual([slot]);
    expect(runs).toEqual([{ path: 'build' }]);
    expect(JSON.stringify(result.messages)).not.toContain('hijacked');
  });
});

describe('context.transform results that are refused: policyError(contextTransform), then the default compaction', () => {
  const TOOL_RESULT: Message = {
    role: 'toolResult',
    toolCallId: 'ghost',
    toolName: 'remove',
    content: 'orphan',
    isError: false,
  };
  const REFUSED: Array<[string, (messages: Message[]) => unknown]> = [
    ['null', () => null],
    ['a string', () => 'compacted'],
    ['an object', () => ({ messages: [] })],
    ['an empty array', () => []],
    ['a tool result without its call (an orphaned pair)', (messages) => [...messages, TOOL_RESULT]],
    ['a message of the wrong shape', (messages) => [...messages, { role: 'assistant', content: 'not blocks' }]],
    [
      'a proxy that throws on every read',
      () =>
        new Proxy([], {
          get: () => {
            throw new Error('proxy exploded');
          },
        }),
    ],
    [
      'a throw',
      () => {
        throw new Error('transform exploded');
      },
    ],
    ['a rejection', () => Promise.reject(new Error('transform rejected'))],
  ];

  it.each(REFUSED)(
    'before a model call, %s: reported, and the model gets the default view',
    async (_name, transform) => {
      const model = scriptedModel([{ text: 'done' }]);
      const agent = createAgent({ model, context: { maxTokens: 100_000, transform: transform as never } });
      const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
      expect(result.status).toBe('completed');
      expect(ofType(events, 'policyError').map((event) => event.slot)).toEqual(['contextTransform']);
      expect(model.requests[0]?.messages).toEqual([{ role: 'user', content: PROMPT }]);
    },
  );

  it.each(REFUSED)(
    'on a context overflow, %s: reported, and the default compaction recovers',
    async (_name, transform) => {
      const clock = new SimulatedClock();
      const model = scriptedModel([
        { error: { kind: 'contextOverflow', message: 'prompt is too long' } },
        { text: 'fits now' },
      ]);
      const history = ['one', 'two', 'three'];
      let overflowCalls = 0;
      const agent = createAgent({
        model,
        clock,
        context: {
          transform: (messages, info) =>
            (info.overflow ? (overflowCalls++, transform(messages)) : messages) as Message[],
        },
      });
      const { result, events } = await expectTrusted(
        agent.prompt(history.map((content) => ({ role: 'user' as const, content }))),
        history,
        clock,
      );
      expect(overflowCalls).toBe(1);
      expect(result).toMatchObject({ status: 'completed' });
      expect(ofType(events, 'contextCompacted')).toHaveLength(1);
      expect(ofType(events, 'policyError').map((event) => event.slot)).toEqual(['contextTransform']);
    },
  );
});

export type { AgentError };
