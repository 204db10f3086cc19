import { describe, expect, it } from 'vitest';
import { createAgent, type AgentEvent, type ToolCallBlock } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { deferred, expectCounters, expectInvariants, finished, lifecycle, settle } from '../support/harness.js';
import { idTool, ofType, TEXT_TURN, TOOL_TURN_HEAD, toolResult, toolTrace, USAGE } from './tools-fixtures.js';

const ids = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`);

/** One turn calling `tool` once per id, then a text answer. */
function batchScript(tool: string, callIds: string[]) {
  return scriptedModel([
    { toolCalls: callIds.map((id) => ({ id, name: tool, arguments: { id } })), usage: USAGE },
    { text: 'Done.', usage: USAGE },
  ]);
}

/** Most calls running at once, read from the log. */
function maxRunning(events: AgentEvent[]): number {
  const running = new Set<string>();
  let max = 0;
  for (const event of events) {
    if (event.type === 'toolExecutionStart') max = Math.max(max, running.add(event.toolCallId).size);
    if (event.type === 'toolExecutionEnd') running.delete(event.toolCallId);
  }
  return max;
}

/** A deadline shared by every gate of a test, so a wrong strategy fails in 2 s instead of hanging. */
function deadline(ms: number): { gate<T>(promise: Promise<T>, what: string): Promise<T>; clear(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('gate timed out')), ms);
  });
  expired.catch(() => {});
  return {
    gate: (promise, what) =>
      Promise.race([promise, expired.catch(() => Promise.reject(new Error(`gate timed out: ${what}`)))]),
    clear: () => clearTimeout(timer),
  };
}

describe('T8 execution strategies', () => {
  it('T8 sequential: each call starts only after the previous one ended', async () => {
    const timeline: string[] = [];
    const step = idTool('step', async (args) => {
      timeline.push(`run:${args.id}`);
      await settle(2);
      timeline.push(`return:${args.id}`);
      return `did ${args.id}`;
    });
    const model = batchScript('step', ['a', 'b', 'c']);
    const agent = createAgent({ model, tools: [step], toolExecution: 'sequential', retry: { jitter: false } });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      ...[
        'toolExecutionStart',
        'toolExecutionEnd',
        'toolExecutionStart',
        'toolExecutionEnd',
        'toolExecutionStart',
        'toolExecutionEnd',
      ],
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['start:a', 'end:a', 'start:b', 'end:b', 'start:c', 'end:c']);
    expect(timeline).toEqual(['run:a', 'return:a', 'run:b', 'return:b', 'run:c', 'return:c']);
    expect(model.requests[1]?.messages.slice(2)).toEqual(
      ['a', 'b', 'c'].map((id) => toolResult(id, 'step', `did ${id}`)),
    );
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

  for (const count of [3, 50]) {
    it(`T8 parallel (default): all ${count} calls start before any ends — each tool waits for the next one to start`, async () => {
      const callIds = ids(count);
      const started = new Map(callIds.map((id) => [id, deferred()]));
      const gates = deadline(2_000);
      const gate = idTool('gate', async (args) => {
        const index = callIds.indexOf(args.id);
        started.get(args.id)?.resolve();
        const next = callIds[index + 1];
        if (next !== undefined)
          await gates.gate(started.get(next)?.promise ?? Promise.resolve(), `${next} never started`);
        return `passed ${args.id}`;
      });
      const model = batchScript('gate', callIds);
      const agent = createAgent({ model, tools: [gate], retry: { jitter: false } });
      const { result, events } = await finished(agent.prompt('go'));
      gates.clear();

      const starts = ofType(events, 'toolExecutionStart');
      const ends = ofType(events, 'toolExecutionEnd');
      expect(starts.map((e) => e.toolCallId)).toEqual(callIds);
      expect(ends).toHaveLength(count);
      expect(ends.filter((e) => e.isError).map((e) => e.result)).toEqual([]);
      const firstEnd = events.indexOf(ends[0] as AgentEvent);
      expect(events.indexOf(starts.at(-1) as AgentEvent)).toBeLessThan(firstEnd);
      expect(lifecycle(events)).toEqual([
        ...TOOL_TURN_HEAD,
        ...Array<string>(count).fill('toolExecutionStart'),
        ...Array<string>(count).fill('toolExecutionEnd'),
        'turnEnd',
        ...TEXT_TURN,
        'agentEnd',
      ]);
      expect(ofType(events, 'turnEnd')[0]?.toolResults).toEqual(
        callIds.map((id) => toolResult(id, 'gate', `passed ${id}`)),
      );
      expectInvariants(events, result.messages);
      expectCounters(result.counters, {
        turns: 2,
        modelCalls: 2,
        toolCallsRequested: count,
        toolCallsExecuted: count,
        tokensIn: 20,
        tokensOut: 10,
      });
    });
  }

  it('T8 concurrency n: never more than n calls run at once (and n do)', async () => {
    const callIds = ids(10);
    let running = 0;
    let peak = 0;
    const work = idTool('work', async (args) => {
      running++;
      peak = Math.max(peak, running);
      // Different durations so calls finish out of order and the pool refills unevenly.
      await settle(1 + (callIds.indexOf(args.id) % 3));
      running--;
      return `worked ${args.id}`;
    });
    const model = batchScript('work', callIds);
    const agent = createAgent({ model, tools: [work], toolExecution: { concurrency: 3 }, retry: { jitter: false } });
    const { result, events } = await finished(agent.prompt('go'));

    expect(peak).toBe(3);
    expect(maxRunning(events)).toBe(3);
    expect(ofType(events, 'toolExecutionStart').map((e) => e.toolCallId)).toEqual(callIds);
    const trace = toolTrace(events);
    expect(trace.slice(0, 3)).toEqual(['start:c0', 'start:c1', 'start:c2']);
    expect(trace.filter((t) => t.startsWith('end:'))).toHaveLength(10);
    expect(trace.some((t) => t.endsWith('!'))).toBe(false);
    const life = lifecycle(events);
    expect(life.slice(0, TOOL_TURN_HEAD.length)).toEqual(TOOL_TURN_HEAD);
    expect(life.slice(TOOL_TURN_HEAD.length + 20)).toEqual(['turnEnd', ...TEXT_TURN, 'agentEnd']);
    expect(ofType(events, 'turnEnd')[0]?.toolResults).toEqual(
      callIds.map((id) => toolResult(id, 'work', `worked ${id}`)),
    );
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 10,
      toolCallsExecuted: 10,
      tokensIn: 20,
      tokensOut: 10,
    });
  });
});

describe('T9 custom partition', () => {
  /** Calls: u (unknown tool), d (approval denied), a and b (valid): the prepared calls are [a, b]. */
  function partitionAgent(partition: (calls: readonly ToolCallBlock[]) => number[][]) {
    const ran: string[] = [];
    const seen: string[][] = [];
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'u', name: 'nope', arguments: {} },
          { id: 'd', name: 'danger', arguments: { id: 'd' } },
          { id: 'a', name: 'read', arguments: { id: 'a' } },
          { id: 'b', name: 'read', arguments: { id: 'b' } },
        ],
        usage: USAGE,
      },
      { text: 'Done.', usage: USAGE },
    ]);
    const agent = createAgent({
      model,
      tools: [
        idTool('read', (args) => (ran.push(args.id), `read ${args.id}`)),
        idTool('danger', () => (ran.push('danger'), 'boom'), { requiresApproval: true }),
      ],
      approval: () => ({ approved: false, reason: 'no' }),
      toolExecution: {
        partition: (calls) => {
          seen.push(calls.map((c) => c.id));
          return partition(calls);
        },
      },
      retry: { jitter: false },
    });
    return { agent, model, ran, seen };
  }

  const earlier = [
    toolResult('u', 'nope', 'Unknown tool "nope". Available tools: read, danger.', true),
    toolResult('d', 'danger', 'rejected: no', true),
  ];
  const counters = {
    turns: 2,
    modelCalls: 2,
    toolCallsRequested: 4,
    toolCallsInvalid: 1,
    toolCallsRejected: 1,
    approvalsRequested: 1,
    approvalsDenied: 1,
    tokensIn: 20,
    tokensOut: 10,
  };

  const invalid: Array<[string, number[][], string]> = [
    // Index 2 would be valid against the model's calls or the preprocessed ones; the prepared calls are only [a, b].
    ['out-of-range', [[0], [2]], 'invalid partition: index 2 is out of range (0..1)'],
    ['duplicate', [[0, 1], [1]], 'invalid partition: index 1 appears twice'],
    ['missing', [[1]], 'invalid partition: indices 0 are missing'],
  ];
  const throwing = (): number[][] => {
    throw new Error('no plan');
  };
  const cases: Array<[string, () => number[][], string]> = [
    ...invalid.map(([kind, groups, text]): [string, () => number[][], string] => [
      `with ${kind} indices`,
      () => groups,
      text,
    ]),
    ['that throws', throwing, 'invalid partition: partition threw: no plan'],
  ];
  for (const [kind, partition, text] of cases) {
    it(`T9 a custom partition ${kind}: every prepared call gets "invalid partition", none starts; calls rejected earlier keep their own error`, async () => {
      const { agent, model, ran, seen } = partitionAgent(partition);
      const { result, events } = await finished(agent.prompt('go'));

      expect(lifecycle(events)).toEqual([
        ...TOOL_TURN_HEAD,
        'toolApprovalRequested',
        'toolApprovalResolved',
        ...Array<string>(4).fill('toolExecutionEnd'),
        'turnEnd',
        ...TEXT_TURN,
        'agentEnd',
      ]);
      expect(toolTrace(events)).toEqual(['ask:d', 'denied:d', 'end:u!', 'end:d!', 'end:a!', 'end:b!']);
      expect(seen).toEqual([['a', 'b']]);
      expect(ran).toEqual([]);
      const results = [...earlier, toolResult('a', 'read', text, true), toolResult('b', 'read', text, true)];
      expect(ofType(events, 'turnEnd')[0]?.toolResults).toEqual(results);
      expect(model.requests[1]?.messages.slice(2)).toEqual(results);
      expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
      expectInvariants(events, result.messages);
      expectCounters(result.counters, counters);
    });
  }

  it('T9 a valid custom partition indexes the prepared calls: groups run in the given order', async () => {
    const { agent, ran, seen } = partitionAgent(() => [[1], [0]]);
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolApprovalRequested',
      'toolApprovalResolved',
      ...['toolExecutionStart', 'toolExecutionEnd', 'toolExecutionStart', 'toolExecutionEnd'],
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual([
      'ask:d',
      'denied:d',
      'start:b',
      'end:b',
      'start:a',
      'end:a',
      'end:u!',
      'end:d!',
    ]);
    expect(seen).toEqual([['a', 'b']]);
    expect(ran).toEqual(['b', 'a']);
    expect(ofType(events, 'turnEnd')[0]?.toolResults).toEqual([
      ...earlier,
      toolResult('a', 'read', 'read a'),
      toolResult('b', 'read', 'read b'),
    ]);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { ...counters, toolCallsExecuted: 2 });
  });
});
