import { describe, expect, it } from 'vitest';
import { createAgent, type AssistantMessage } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { deferred, expectCounters, expectInvariants, finished, lifecycle } from '../support/harness.js';
import { idTool, ofType, readTool, TEXT_TURN, TOOL_TURN_HEAD, toolResult, toolTrace, USAGE } from './tools-fixtures.js';

describe('T1 unknown tool / schema-invalid / malformed-JSON arguments', () => {
  it('T1 unknown tool, invalid arguments and malformed JSON end without a start, with messages naming the field paths; the loop continues', async () => {
    let executions = 0;
    const read = readTool(() => {
      executions++;
      return 'never';
    });
    const list = idTool('list', () => 'never');
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'u', name: 'delete_everything', arguments: { all: true } },
          { id: 'i', name: 'read', arguments: { path: 42, options: { limit: 'ten' } } },
          { id: 'm', name: 'read', rawArguments: '{"path": "a.txt",,}' },
        ],
        usage: USAGE,
      },
      { text: 'I will fix my calls.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [read, list], retry: { jitter: false } });
    const { result, events } = await finished(agent.prompt('go'));

    const unknownText = 'Unknown tool "delete_everything". Available tools: read, list.';
    const invalidText =
      'Invalid arguments for tool "read": path: expected string, received number; options.limit: expected number, received string';
    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolExecutionEnd',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['end:u!', 'end:i!', 'end:m!']);
    const ends = ofType(events, 'toolExecutionEnd');
    expect(ends.map((e) => [e.toolCallId, e.toolName, e.result])).toEqual([
      ['u', 'delete_everything', unknownText],
      ['i', 'read', invalidText],
      [
        'm',
        'read',
        expect.stringMatching(
          /^Invalid arguments for tool "read": malformed JSON \(.+\)\. Send the arguments as a JSON object\.$/,
        ),
      ],
    ]);
    expect(executions).toBe(0);
    const turnEnds = ofType(events, 'turnEnd');
    expect(turnEnds.map((e) => e.reason)).toEqual(['toolsExecuted', 'complete']);
    expect(turnEnds[0]?.toolResults.map((r) => r.toolCallId)).toEqual(['u', 'i', 'm']);

    // The model acts on the errors: its next request holds the three error results in call order.
    const second = model.requests[1]?.messages ?? [];
    expect(second.slice(2)).toEqual([
      toolResult('u', 'delete_everything', unknownText, true),
      toolResult('i', 'read', invalidText, true),
      toolResult('m', 'read', ends[2]?.result ?? '', true),
    ]);
    // A malformed call's arguments reach history as {} (the raw text could not be decoded).
    const assistant = second[1] as AssistantMessage;
    expect(
      assistant.content.filter((b) => b.type === 'toolCall').map((b) => (b.type === 'toolCall' ? b.arguments : null)),
    ).toEqual([{ all: true }, { path: 42, options: { limit: 'ten' } }, {}]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(model.calls).toBe(2);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 3,
      toolCallsInvalid: 3,
      tokensIn: 20,
      tokensOut: 10,
    });
  });
});

describe('T2 tool throws or rejects', () => {
  it('T2 a throwing and a rejecting tool each get one start and one end(isError) with the message; the loop continues', async () => {
    const crash = idTool('crash', () => {
      throw new Error('disk full');
    });
    const reject = idTool('reject', async () => {
      await Promise.resolve();
      throw new Error('network down');
    });
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'crash', arguments: { id: '1' } },
          { id: 'b', name: 'reject', arguments: { id: '2' } },
        ],
        usage: USAGE,
      },
      { text: 'Both failed.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [crash, reject], toolExecution: 'sequential', retry: { jitter: false } });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolExecutionStart',
      'toolExecutionEnd',
      'toolExecutionStart',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['start:a', 'end:a!', 'start:b', 'end:b!']);
    expect(ofType(events, 'toolExecutionEnd').map((e) => e.result)).toEqual(['disk full', 'network down']);
    expect(ofType(events, 'toolExecutionStart').map((e) => e.arguments)).toEqual([{ id: '1' }, { id: '2' }]);
    expect(model.requests[1]?.messages.slice(2)).toEqual([
      toolResult('a', 'crash', 'disk full', true),
      toolResult('b', 'reject', 'network down', true),
    ]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      toolCallsFailed: 2,
      tokensIn: 20,
      tokensOut: 10,
    });
  });
});

describe('T11 truncated output', () => {
  it('T11 truncated output (stop reason length) with an incomplete tool call gives "arguments truncated", {} arguments in history; the loop continues', async () => {
    const seen: string[] = [];
    const read = readTool((args) => {
      seen.push(args.path);
      return `contents of ${args.path}`;
    });
    const model = scriptedModel([
      {
        text: 'Reading two files',
        toolCalls: [
          { id: 'whole', name: 'read', arguments: { path: 'a.txt' } },
          { id: 'cut', name: 'read', arguments: { path: 'a-very-long-file-name.txt' } },
        ],
        stopReason: 'length',
        usage: USAGE,
      },
      { text: 'Retrying with shorter arguments.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [read], retry: { jitter: false } });
    const { result, events } = await finished(agent.prompt('go'));

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolExecutionStart',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['start:whole', 'end:whole', 'end:cut!']);
    expect(seen).toEqual(['a.txt']);
    const truncated = ofType(events, 'toolExecutionEnd')[1]?.result ?? '';
    expect(truncated).toContain('Arguments truncated');
    expect(truncated).toContain('"read"');

    const [turn] = ofType(events, 'turnEnd');
    expect(turn?.reason).toBe('toolsExecuted');
    expect(turn?.assistant?.stopReason).toBe('length');
    const calls = (turn?.assistant?.content ?? []).filter((b) => b.type === 'toolCall');
    expect(calls).toEqual([
      { type: 'toolCall', id: 'whole', name: 'read', arguments: { path: 'a.txt' } },
      { type: 'toolCall', id: 'cut', name: 'read', arguments: {} },
    ]);
    // The next model call sees the truncated call with {} and its error result.
    const next = model.requests[1]?.messages ?? [];
    expect((next[1] as AssistantMessage).content.filter((b) => b.type === 'toolCall')).toEqual(calls);
    expect(next.slice(2)).toEqual([
      toolResult('whole', 'read', 'contents of a.txt'),
      toolResult('cut', 'read', truncated, true),
    ]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 1,
      toolCallsInvalid: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });
});

describe('T12 results in call order', () => {
  it('T12 results are committed in call order even when tools finish in reverse order', async () => {
    const gates = { a: deferred(), b: deferred(), c: deferred() };
    const started = { a: deferred(), b: deferred(), c: deferred() };
    const slow = idTool('slow', async (args) => {
      const key = args.id as keyof typeof gates;
      started[key].resolve();
      await gates[key].promise;
      return `done ${key}`;
    });
    const model = scriptedModel([
      { toolCalls: ['a', 'b', 'c'].map((id) => ({ id, name: 'slow', arguments: { id } })), usage: USAGE },
      { text: 'All done.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [slow], retry: { jitter: false } });
    const run = agent.prompt('go');
    await Promise.all([started.a.promise, started.b.promise, started.c.promise]);
    // Finish c, then b, then a, each after the previous end was published.
    for (const key of ['c', 'b', 'a'] as const) {
      gates[key].resolve();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const { result, events } = await finished(run);

    expect(lifecycle(events)).toEqual([
      ...TOOL_TURN_HEAD,
      'toolExecutionStart',
      'toolExecutionStart',
      'toolExecutionStart',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(toolTrace(events)).toEqual(['start:a', 'start:b', 'start:c', 'end:c', 'end:b', 'end:a']);
    const expected = ['a', 'b', 'c'].map((id) => toolResult(id, 'slow', `done ${id}`));
    expect(ofType(events, 'turnEnd')[0]?.toolResults).toEqual(expected);
    expect(result.messages.slice(2, 5)).toEqual(expected);
    expect(model.requests[1]?.messages.slice(2)).toEqual(expected);
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
