import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { createAgent, type AgentEvent } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, lifecycle } from '../support/harness.js';
import { idTool, ofType, TEXT_TURN, TOOL_TURN_HEAD, toolResult, toolTrace, USAGE } from './tools-fixtures.js';

const UPDATES = 1_000;
const CALLS = ['p0', 'p1', 'p2'];
/** Synchronous work the consumer does per event: 3,000 updates × 20 µs ≈ 60 ms in all. */
const BUSY_MS = 0.02;

function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin: a consumer that blocks the thread, like heavy rendering
  }
}

describe('T10 progress updates', () => {
  it('T10 progress updates from 3 concurrent tools, 1,000 each, with a slow consumer: all 3,000 delivered, attributed, inside start/end; the tools are slowed, not failed', async () => {
    const toolTime = new Map<string, number>();
    const progress = idTool('progress', async (args, ctx) => {
      const started = performance.now();
      for (let i = 0; i < UPDATES; i++) await ctx.update({ step: i });
      toolTime.set(args.id, performance.now() - started);
      return `sent ${UPDATES} updates`;
    });
    const model = scriptedModel([
      { toolCalls: CALLS.map((id) => ({ id, name: 'progress', arguments: { id } })), usage: USAGE },
      { text: 'All reported.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [progress], retry: { jitter: false } });

    const run = agent.prompt('go');
    const consumed: AgentEvent[] = [];
    const busyFor = new Map<string, number>(CALLS.map((id) => [id, 0]));
    run.events.subscribe((event) => {
      consumed.push(event);
      if (event.type !== 'toolExecutionUpdate') return;
      const t0 = performance.now();
      busy(BUSY_MS);
      busyFor.set(event.toolCallId, (busyFor.get(event.toolCallId) ?? 0) + performance.now() - t0);
    });
    const { result, events } = await finished(run);

    // The slow consumer saw the whole log, every update included.
    // (Replayed events equal the ones published; a message's updates are rebuilt, not the same objects.)
    expect(consumed.length).toBe(events.length);
    expect(consumed).toEqual(events);
    const updates = ofType(events, 'toolExecutionUpdate');
    expect(updates).toHaveLength(CALLS.length * UPDATES);

    // Attribution: each update names its call and tool, in the call's own order, between its start and end.
    for (const id of CALLS) {
      const start = events.findIndex((e) => e.type === 'toolExecutionStart' && e.toolCallId === id);
      const end = events.findIndex((e) => e.type === 'toolExecutionEnd' && e.toolCallId === id);
      const own = events.flatMap((e, index) =>
        e.type === 'toolExecutionUpdate' && e.toolCallId === id ? [{ e, index }] : [],
      );
      expect(own.map(({ e }) => e.partial)).toEqual(Array.from({ length: UPDATES }, (_, i) => ({ step: i })));
      expect(own.every(({ e }) => e.toolName === 'progress' && e.turnIndex === 0)).toBe(true);
      expect(start).toBeGreaterThanOrEqual(0);
      expect(own[0]?.index).toBeGreaterThan(start);
      expect(own.at(-1)?.index).toBeLessThan(end);
    }
    // Concurrent: every call started before any ended, and their updates interleave.
    const lastStart = Math.max(
      ...CALLS.map((id) => events.findIndex((e) => e.type === 'toolExecutionStart' && e.toolCallId === id)),
    );
    const firstEnd = events.findIndex((e) => e.type === 'toolExecutionEnd');
    expect(lastStart).toBeLessThan(firstEnd);
    const firstOf = (id: string) => events.findIndex((e) => e.type === 'toolExecutionUpdate' && e.toolCallId === id);
    const lastOf = (id: string) =>
      events.length -
      1 -
      [...events].reverse().findIndex((e) => e.type === 'toolExecutionUpdate' && e.toolCallId === id);
    expect(firstOf('p2')).toBeLessThan(lastOf('p0'));

    // Slowed, not failed: each tool took at least the consumer's time on its own updates, and succeeded.
    for (const id of CALLS)
      expect(toolTime.get(id)).toBeGreaterThanOrEqual(busyFor.get(id) ?? Number.POSITIVE_INFINITY);
    expect(Math.min(...CALLS.map((id) => busyFor.get(id) ?? 0))).toBeGreaterThanOrEqual(UPDATES * BUSY_MS);
    const results = CALLS.map((id) => toolResult(id, 'progress', `sent ${UPDATES} updates`));
    expect(ofType(events, 'turnEnd')[0]?.toolResults).toEqual(results);
    expect(model.requests[1]?.messages.slice(2)).toEqual(results);

    // The whole sequence: the tool events of the batch sit between the assistant message and turnEnd.
    const life = lifecycle(events);
    const head = TOOL_TURN_HEAD.length;
    const tail = ['turnEnd', ...TEXT_TURN, 'agentEnd'];
    expect(life.slice(0, head)).toEqual(TOOL_TURN_HEAD);
    expect(life.slice(-tail.length)).toEqual(tail);
    const middle = life.slice(head, -tail.length);
    expect(middle).toHaveLength(3 + 3 * UPDATES + 3);
    expect(countBy(middle)).toEqual({ toolExecutionStart: 3, toolExecutionUpdate: 3 * UPDATES, toolExecutionEnd: 3 });

    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 3,
      toolCallsExecuted: 3,
      tokensIn: 20,
      tokensOut: 10,
    });
  });
});

describe('T10 progress attribution at the very start of a tool', () => {
  it('T10 an update sent synchronously when the tool starts falls after its toolExecutionStart; the start is published before the tool runs', async () => {
    const startPublishedBeforeRun: boolean[] = [];
    const started = new Set<string>();
    const early = idTool('early', (args, ctx) => {
      startPublishedBeforeRun.push(started.has(ctx.toolCallId));
      void ctx.update({ phase: 'begin' });
      return `ran ${args.id}`;
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'a', name: 'early', arguments: { id: 'x' } }], usage: USAGE },
      { text: 'Done.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [early], retry: { jitter: false } });
    agent.events.subscribe((event) => {
      if (event.type === 'toolExecutionStart') started.add(event.toolCallId);
    });
    const { result, events } = await finished(agent.prompt('go'));

    expect(startPublishedBeforeRun).toEqual([true]);
    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolExecutionStart',
      'toolExecutionUpdate',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });
});

describe('T10 an update after the call ended', () => {
  it('T10 an update a tool sends after its call ended is not published: every update stays inside its call', async () => {
    const late = idTool('late', (_args, ctx) => {
      // A misbehaving tool: it reports progress after it has returned.
      setTimeout(() => void ctx.update({ after: 'end' }), 1);
      return 'ok';
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'a', name: 'late', arguments: { id: 'x' } }], usage: USAGE },
      // The second model call waits long enough for the late update to fire while turn 1 is open.
      { text: 'Done.', usage: USAGE, delayMs: 20 },
    ]);
    const agent = createAgent({ model, tools: [late], retry: { jitter: false } });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolExecutionStart',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['start:a', 'end:a']);
    expect(model.requests[1]?.messages.slice(2)).toEqual([toolResult('a', 'late', 'ok')]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });
});

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
