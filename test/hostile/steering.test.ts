import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import {
  createAgent,
  defineTool,
  memoryStore,
  type AgentEvent,
  type AgentOptions,
  type SessionStore,
} from 'agentchart';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { expectTrusted, macrotask, macrotasks, ofType, settleRun, watchTheProcess } from './harness.js';

// The hostile-input contract, steering: a steer accepted at any point of a turn before its batch settled interrupts
// it (steeringInterrupts on): calls not started never start (result `skipped: steering`), a
// pending approval is withdrawn (toolApprovalResolved { approved: false }), running calls get the
// grace period; a steer during a model stream or a backoff takes effect at the next decision. A
// steer during a live stream never stores a half-published attempt.

watchTheProcess();

const PROMPT = 'refactor the parser';
const STEER = 'stop, use the new API instead';
const SKIPPED = /^skipped: steering/;

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function editTool() {
  const ran: string[] = [];
  const tool = defineTool({
    name: 'edit',
    description: 'edits a file',
    parameters: z.object({ file: z.string() }),
    execute: ({ file }) => {
      ran.push(file);
      return `edited ${file}`;
    },
  });
  return { tool, ran };
}

const TWO_EDITS = {
  toolCalls: [
    { id: 'e1', name: 'edit', arguments: { file: 'a.ts' } },
    { id: 'e2', name: 'edit', arguments: { file: 'b.ts' } },
  ],
};

/** Asserts the interrupted turn: no call started, each got `skipped: steering`, the steer was delivered next. */
function expectSkipped(events: AgentEvent[], messages: readonly unknown[], ran: string[]) {
  expect(ran).toEqual([]);
  expect(ofType(events, 'toolExecutionStart')).toEqual([]);
  const first = ofType(events, 'turnEnd')[0];
  expect(first?.reason).toBe('steeringInterrupt');
  expect(first?.toolResults.map((result) => [result.toolCallId, result.isError])).toEqual([
    ['e1', true],
    ['e2', true],
  ]);
  for (const result of first?.toolResults ?? []) expect(result.content).toMatch(SKIPPED);
  expect(messages).toContainEqual({ role: 'user', content: STEER });
}

describe('a steer before the batch started: no call starts', () => {
  it('during the model stream (it takes effect when the reply is in)', async () => {
    const clock = new SimulatedClock();
    const { tool, ran } = editTool();
    const model = scriptedModel([{ ...TWO_EDITS, delayMs: 1_000 }, { text: 'switched to the new API' }], { clock });
    const agent = createAgent({ model, clock, tools: [tool] });
    const run = agent.prompt(PROMPT);
    await macrotasks(3);
    const receipt = agent.steer(STEER);
    const { result, events } = await expectTrusted(run, [PROMPT, STEER], clock);
    expectSkipped(events, result.messages, ran);
    // The reply that asked for the calls is still published and committed (parity).
    expect(ofType(events, 'messageEnd')[0]?.message.content).toHaveLength(2);
    expect(await receipt).toEqual({ status: 'delivered', turnIndex: 1 });
    expect(result.counters.steeringDelivered).toBe(1);
  });

  it('during a pre-turn policy', async () => {
    const { tool, ran } = editTool();
    const gate = deferred<{ verdict: 'continue' }>();
    const agent = createAgent({
      model: scriptedModel([TWO_EDITS, { text: 'ok' }]),
      tools: [tool],
      policies: { preTurn: [(ctx) => (ctx.turnIndex === 0 ? gate.promise : { verdict: 'continue' })] },
    });
    const run = agent.prompt(PROMPT);
    await macrotasks(2);
    void agent.steer(STEER);
    gate.resolve({ verdict: 'continue' });
    const { result, events } = await expectTrusted(run, [PROMPT, STEER]);
    expectSkipped(events, result.messages, ran);
  });

  it('during a pre-dispatch policy (not waited for)', async () => {
    const { tool, ran } = editTool();
    const gate = deferred<{ verdict: 'continue' }>();
    let asked = 0;
    const agent = createAgent({
      model: scriptedModel([TWO_EDITS, { text: 'ok' }]),
      tools: [tool],
      policies: { preDispatch: [() => (asked++ === 0 ? gate.promise : { verdict: 'continue' })] },
    });
    const run = agent.prompt(PROMPT);
    for (let i = 0; i < 10 && asked === 0; i++) await macrotask();
    void agent.steer(STEER);
    const { result, events } = await expectTrusted(run, [PROMPT, STEER]);
    gate.resolve({ verdict: 'continue' });
    await macrotasks(2);
    expectSkipped(events, result.messages, ran);
  });

  it('during pending approvals: each withdrawn as denied, every handler is signalled', async () => {
    const { tool, ran } = editTool();
    const signals: AbortSignal[] = [];
    const agent = createAgent({
      model: scriptedModel([TWO_EDITS, { text: 'ok' }]),
      tools: [tool],
      approvalMode: 'always',
      approval: (_request, ctx) => (signals.push(ctx.signal), new Promise(() => {})),
    });
    const run = agent.prompt(PROMPT);
    for (let i = 0; i < 10 && signals.length < 2; i++) await macrotask();
    void agent.steer(STEER);
    const { result, events } = await expectTrusted(run, [PROMPT, STEER]);
    expectSkipped(events, result.messages, ran);
    // Both calls were asked together; the steer withdraws both, in call order.
    expect(ofType(events, 'toolApprovalResolved').map((event) => [event.toolCallId, event.approved])).toEqual([
      ['e1', false],
      ['e2', false],
    ]);
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
    expect(result.counters).toMatchObject({ approvalsRequested: 2, approvalsDenied: 2 });
  });

  it('during a durable approval: withdrawn, nothing left pending, the stored session loads', async () => {
    const { tool, ran } = editTool();
    const store = memoryStore();
    const agent = createAgent({
      model: scriptedModel([TWO_EDITS, { text: 'ok' }]),
      tools: [tool],
      approvalMode: 'always',
      store,
      sessionId: 'durable',
    });
    await agent.ready;
    const run = agent.prompt(PROMPT);
    for (let i = 0; i < 10 && agent.pendingApprovals().length === 0; i++) await macrotask();
    expect(agent.pendingApprovals().map((pending) => pending.toolCallId)).toEqual(['e1', 'e2']);
    void agent.steer(STEER);
    const { result, events } = await expectTrusted(run, [PROMPT, STEER]);
    expectSkipped(events, result.messages, ran);
    expect(agent.pendingApprovals()).toEqual([]);
    await agent.flush();
    await agent.close();
    const again = createAgent({ model: scriptedModel([]), tools: [tool], store, sessionId: 'durable' });
    expect((await again.ready).resumedRun).toBeNull();
    expect(again.pendingApprovals()).toEqual([]);
  });

  it('during a backoff: the re-run attempt honours it', async () => {
    const clock = new SimulatedClock();
    const { tool, ran } = editTool();
    const model = scriptedModel([{ error: { kind: 'rateLimit', retryAfterMs: 5_000 } }, TWO_EDITS, { text: 'ok' }], {
      clock,
    });
    const agent = createAgent({ model, clock, tools: [tool] });
    const run = agent.prompt(PROMPT);
    await macrotasks(3);
    expect(model.calls).toBe(1);
    void agent.steer(STEER);
    const { result, events } = await expectTrusted(run, [PROMPT, STEER], clock);
    expectSkipped(events, result.messages, ran);
    expect(ofType(events, 'retry')).toHaveLength(1);
  });

  it('from a messageEnd subscriber, in the very step that publishes the tool-call reply', async () => {
    const { tool, ran } = editTool();
    const agent = createAgent({ model: scriptedModel([TWO_EDITS, { text: 'ok' }]), tools: [tool] });
    let sent = false;
    agent.events.subscribe((event) => {
      if (event.type === 'messageEnd' && !sent) {
        sent = true;
        void agent.steer(STEER);
      }
    });
    const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT, STEER]);
    expectSkipped(events, result.messages, ran);
  });
});

describe('a steer while the batch runs', () => {
  it('sequential calls: the running one gets the grace period, the rest never start', async () => {
    const clock = new SimulatedClock();
    const started: string[] = [];
    const slow = defineTool({
      name: 'edit',
      description: 'edits slowly',
      parameters: z.object({ file: z.string() }),
      execute: ({ file }, { signal }) => {
        started.push(file);
        return new Promise<string>((resolve) => {
          const timer = clock.setTimeout(() => resolve(`edited ${file}`), 100);
          signal.addEventListener('abort', () => clock.clearTimeout(timer));
        });
      },
    });
    const calls = {
      toolCalls: ['a', 'b', 'c'].map((file, i) => ({ id: `e${i + 1}`, name: 'edit', arguments: { file } })),
    };
    const agent = createAgent({
      model: scriptedModel([calls, { text: 'ok' }]),
      clock,
      tools: [slow],
      toolExecution: 'sequential',
      steeringGraceMs: 250,
    });
    const run = agent.prompt(PROMPT);
    for (let i = 0; i < 10 && started.length === 0; i++) await macrotask();
    void agent.steer(STEER);
    const { result, events } = await expectTrusted(run, [PROMPT, STEER], clock, { stepMs: 50 });
    // e1 finished within the grace period and keeps its result; e2 and e3 never started.
    expect(started).toEqual(['a']);
    const results = ofType(events, 'turnEnd')[0]?.toolResults ?? [];
    expect(results.map((r) => r.content)).toEqual([
      'edited a',
      expect.stringMatching(SKIPPED),
      expect.stringMatching(SKIPPED),
    ]);
    expect(ofType(events, 'turnEnd')[0]?.reason).toBe('steeringInterrupt');
    expect(result.counters.toolCallsExecuted).toBe(1);
  });

  it('a tool running past the grace period is cancelled with `cancelled: steering`', async () => {
    const clock = new SimulatedClock();
    const hang = defineTool({
      name: 'edit',
      description: 'hangs',
      parameters: z.object({ file: z.string() }),
      execute: () => new Promise<string>(() => {}),
    });
    const agent = createAgent({
      model: scriptedModel([{ toolCalls: [{ id: 'e1', name: 'edit', arguments: { file: 'a' } }] }, { text: 'ok' }]),
      clock,
      tools: [hang],
      steeringGraceMs: 250,
    });
    const run = agent.prompt(PROMPT);
    await macrotasks(4);
    void agent.steer(STEER);
    const { events } = await expectTrusted(run, [PROMPT, STEER], clock);
    expect(ofType(events, 'turnEnd')[0]?.toolResults.map((r) => r.content)).toEqual([
      expect.stringMatching(/^cancelled: steering/),
    ]);
  });

  it('with steeringInterrupts false, steering waits for the batch: every call runs', async () => {
    const clock = new SimulatedClock();
    const { tool, ran } = editTool();
    const model = scriptedModel([{ ...TWO_EDITS, delayMs: 1_000 }, { text: 'ok' }], { clock });
    const agent = createAgent({ model, clock, tools: [tool], steeringInterrupts: false });
    const run = agent.prompt(PROMPT);
    await macrotasks(3);
    void agent.steer(STEER);
    const { result, events } = await expectTrusted(run, [PROMPT, STEER], clock);
    expect(ran).toEqual(['a.ts', 'b.ts']);
    expect(ofType(events, 'turnEnd')[0]?.reason).toBe('toolsExecuted');
    expect(result.messages).toContainEqual({ role: 'user', content: STEER });
  });

  it('during post-turn policies (the batch settled): no effect on that turn, delivered next', async () => {
    const { tool, ran } = editTool();
    const gate = deferred<{ verdict: 'continue' }>();
    let asked = 0;
    const agent = createAgent({
      model: scriptedModel([TWO_EDITS, { text: 'ok' }]),
      tools: [tool],
      policies: { postTurn: [() => (asked++ === 0 ? gate.promise : { verdict: 'continue' })] },
    });
    const run = agent.prompt(PROMPT);
    for (let i = 0; i < 10 && asked === 0; i++) await macrotask();
    void agent.steer(STEER);
    gate.resolve({ verdict: 'continue' });
    const { result, events } = await expectTrusted(run, [PROMPT, STEER]);
    expect(ran).toEqual(['a.ts', 'b.ts']);
    expect(ofType(events, 'turnEnd')[0]?.reason).toBe('toolsExecuted');
    expect(result.counters.steeringDelivered).toBe(1);
  });
});

/** A store that stops writing when the process "dies": what it holds then is what a restart loads. */
function crashableStore(): SessionStore & { crash(): void; restart(): void } {
  // The restarted process comes up after the dead one's lease (30 s by default) has lapsed.
  let later = 0;
  const inner = memoryStore({ now: () => Date.now() + later });
  let dead = false;
  return {
    ...inner,
    commitStepSync: (sessionId, step) => {
      if (!dead) inner.commitStepSync(sessionId, step);
    },
    commitStep: async (sessionId, step) => {
      if (!dead) await inner.commitStep(sessionId, step);
    },
    crash: () => (dead = true),
    restart: () => {
      dead = false;
      later += 60_000;
    },
  };
}

describe("a steer during a 'live' stream never stores a half-published attempt", () => {
  it('crash after the steer: the resumed session stores one messageStart per message and pairs', async () => {
    const clock = new SimulatedClock();
    const store = crashableStore();
    const options = (model: AgentOptions['model']): AgentOptions & { store: SessionStore; sessionId: string } => ({
      model,
      clock,
      streaming: 'live',
      store,
      sessionId: 'live',
    });
    // The stream shows some text, then waits on the clock: the steer lands while the message is open.
    const first = createAgent(
      options(scriptedModel([{ text: 'Half of an answer that is shown live', stall: true }], { clock })),
    );
    await first.ready;
    const run = first.prompt(PROMPT);
    await macrotasks(3);
    expect(ofType((await collect(first)).events, 'messageStart')).toHaveLength(1);
    // Accepted means persisted: this steer takes a checkpoint while the live message is open.
    void first.steer(STEER);
    await macrotask();
    store.crash();
    first.abort('the process died');
    await run.result;
    store.restart();

    const second = createAgent(
      options(scriptedModel([{ text: 'A fresh answer' }, { text: 'Now on the new API' }], { clock })),
    );
    const { resumedRun } = await second.ready;
    expect(resumedRun).not.toBeNull();
    // The resumed run's own log starts mid-run: the whole stored log is what is checked.
    const result = await settleRun(resumedRun!, clock);
    expect(result.status).toBe('completed');
    await second.flush();
    const stored = await store.loadEvents('live');
    expect(checkInvariants(stored, second.messages).violations).toEqual([]);
    const perTurn = new Map<number, number>();
    for (const event of stored)
      if (event.type === 'messageStart') perTurn.set(event.turnIndex, (perTurn.get(event.turnIndex) ?? 0) + 1);
    expect([...perTurn.values()].every((count) => count === 1)).toBe(true);
    expect(second.messages).toContainEqual({ role: 'user', content: STEER });
  });
});

async function collect(agent: {
  currentRun: { events: { subscribe(fn: (event: AgentEvent) => void): unknown } } | null;
}) {
  const events: AgentEvent[] = [];
  agent.currentRun?.events.subscribe((event) => events.push(event));
  return { events };
}
