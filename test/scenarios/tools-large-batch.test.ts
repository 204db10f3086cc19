import { describe, expect, it } from 'vitest';
import { createAgent } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, lifecycle } from '../support/harness.js';
import { idTool, ofType, TEXT_TURN, TOOL_TURN_HEAD, toolResult, USAGE } from './tools-fixtures.js';

const SIZE = 1_000;

/** Call i: every tenth (i % 10 = 3) names an unknown tool, every tenth (i % 10 = 7) throws, the rest succeed. */
const kindOf = (i: number): 'unknown' | 'throws' | 'ok' => (i % 10 === 3 ? 'unknown' : i % 10 === 7 ? 'throws' : 'ok');

function expectedResult(i: number) {
  const id = `call${i}`;
  switch (kindOf(i)) {
    case 'unknown':
      return toolResult(id, 'ghost', 'Unknown tool "ghost". Available tools: work.', true);
    case 'throws':
      return toolResult(id, 'work', `failed ${id}`, true);
    case 'ok':
      return toolResult(id, 'work', `done ${id}`);
  }
}

describe('issue 3: a batch of 1,000 tool calls', () => {
  it('spawns a batch of 1,000 tool calls and checks every one gets exactly one result', async () => {
    const callIds = Array.from({ length: SIZE }, (_, i) => `call${i}`);
    const runs = new Map<string, number>();
    const work = idTool('work', async (args) => {
      runs.set(args.id, (runs.get(args.id) ?? 0) + 1);
      await Promise.resolve();
      if (kindOf(callIds.indexOf(args.id)) === 'throws') throw new Error(`failed ${args.id}`);
      return `done ${args.id}`;
    });
    const model = scriptedModel([
      {
        toolCalls: callIds.map((id, i) => ({
          id,
          name: kindOf(i) === 'unknown' ? 'ghost' : 'work',
          arguments: { id },
        })),
        usage: USAGE,
      },
      { text: 'All handled.', usage: USAGE },
    ]);
    // ~9,000 events (the arguments of 1,000 calls stream in fragments): all kept for the late subscriber.
    const agent = createAgent({ model, tools: [work], retry: { jitter: false }, replayBuffer: 20_000 });
    const { result, events } = await finished(agent.prompt('go'));

    const expected = callIds.map((_, i) => expectedResult(i));
    const unknownIds = callIds.filter((_, i) => kindOf(i) === 'unknown');
    const startedIds = callIds.filter((_, i) => kindOf(i) !== 'unknown');

    // Every call has exactly one result, in call order: in turnEnd, in history and in the next request.
    expect(ofType(events, 'turnEnd')[0]?.toolResults).toEqual(expected);
    expect(result.messages.slice(2, 2 + SIZE)).toEqual(expected);
    expect(result.messages.filter((m) => m.role === 'toolResult')).toHaveLength(SIZE);
    expect(model.requests[1]?.messages.slice(2)).toEqual(expected);

    // Every known call ran once and was started once; every call ended once; unknown calls never started.
    expect([...runs.keys()]).toEqual(startedIds);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    const starts = ofType(events, 'toolExecutionStart');
    const ends = ofType(events, 'toolExecutionEnd');
    expect(starts.map((e) => e.toolCallId)).toEqual(startedIds);
    expect(new Set(ends.map((e) => e.toolCallId)).size).toBe(SIZE);
    expect(ends).toHaveLength(SIZE);
    for (const end of ends) {
      const i = callIds.indexOf(end.toolCallId);
      expect([end.toolName, end.result, end.isError]).toEqual([
        expected[i]?.toolName,
        expected[i]?.content,
        expected[i]?.isError,
      ]);
    }
    // Executed calls end live; the synthetic results of unknown calls are announced at commit, in call order.
    expect(ends.slice(-unknownIds.length).map((e) => e.toolCallId)).toEqual(unknownIds);

    const life = lifecycle(events);
    const tail = ['turnEnd', ...TEXT_TURN, 'agentEnd'];
    expect(life.slice(0, TOOL_TURN_HEAD.length)).toEqual(TOOL_TURN_HEAD);
    expect(life.slice(-tail.length)).toEqual(tail);
    const middle = life.slice(TOOL_TURN_HEAD.length, -tail.length);
    expect(middle.length).toBe(startedIds.length + SIZE);
    expect(middle.filter((t) => t === 'toolExecutionStart')).toHaveLength(startedIds.length);
    expect(middle.filter((t) => t === 'toolExecutionEnd')).toHaveLength(SIZE);

    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: SIZE,
      toolCallsExecuted: startedIds.length,
      toolCallsFailed: SIZE / 10,
      toolCallsInvalid: unknownIds.length,
      tokensIn: 20,
      tokensOut: 10,
    });
  });
});
