import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { createAgent, defineTool, type AssistantMessage } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { z } from 'zod';
import { expectCounters, expectInvariants, finished, lifecycle, settle } from '../support/harness.js';
import {
  advance,
  bodies,
  called,
  expectCallBound,
  GUIDANCE,
  ofType,
  reportTool,
  result,
  said,
  searchTool,
  TEXT_TURN,
  TOOL_TURN,
  user,
} from './issue5-fixtures.js';

// Scenarios R8–R13: max turns, report mode (finalReport: { toolName }) and its synthetic report,
// and a done-style tool in chat mode (tools never end the loop).

const REPORT = { toolName: 'report' };
const FAILED_REPORT_TURN_ERROR = {
  kind: 'unknown',
  message: 'report mode: the turn ran no valid tool and sent no final report',
  retryable: false,
};

describe('R8 max turns', () => {
  it('R8 max turns reached: ends with endReason maxTurns, the last turn’s tool results committed', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [
        { toolCalls: [{ id: 's1', name: 'search', arguments: { q: 'one' } }], usage: { input: 5, output: 2 } },
        { toolCalls: [{ id: 's2', name: 'search', arguments: { q: 'two' } }], usage: { input: 9, output: 2 } },
      ],
      { clock },
    );
    const agent = createAgent({ model, clock, tools: [searchTool()], maxTurns: 2, retry: { jitter: false } });
    const { result: outcome, events } = await finished(agent.prompt('Look it up'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TOOL_TURN, ...TOOL_TURN, 'agentEnd']);
    expect(ofType(events, 'turnEnd').map((e) => [e.turnIndex, e.reason])).toEqual([
      [0, 'toolsExecuted'],
      [1, 'toolsExecuted'],
    ]);
    const second: AssistantMessage = {
      ...called([{ id: 's2', name: 'search', arguments: { q: 'two' } }]),
      usage: { input: 9, output: 2 },
    };
    expect(outcome.messages).toEqual([
      user('Look it up'),
      { ...called([{ id: 's1', name: 'search', arguments: { q: 'one' } }]), usage: { input: 5, output: 2 } },
      result('s1', 'search', 'found one'),
      second,
      result('s2', 'search', 'found two'),
    ]);
    expect(ofType(events, 'agentEnd')[0]?.messages).toEqual(outcome.messages);
    expect(outcome).toMatchObject({ status: 'failed', endReason: 'maxTurns' });
    expect(outcome.error).toBeUndefined();
    expect(outcome.finalReport).toBeUndefined();
    expect(model.calls).toBe(2);
    expect(agent.snapshot().turnIndex).toBe(2);
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      tokensIn: 14,
      tokensOut: 4,
    });
    expectCallBound([model], 2, 3);
  });
});

describe('R9 report mode happy path', () => {
  it('R9 report mode happy path: tool turn, then report turn; completed, finalReport, the report from the model, turns=2, retries=0', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [
        { toolCalls: [{ id: 's1', name: 'search', arguments: { q: 'revenue' } }] },
        { toolCalls: [{ id: 'r1', name: 'report', arguments: { summary: 'Revenue grew 4%' } }] },
      ],
      { clock },
    );
    const agent = createAgent({
      model,
      clock,
      tools: [searchTool(), reportTool()],
      finalReport: REPORT,
      retry: { jitter: false },
    });
    const { result: outcome, events } = await finished(agent.prompt('Write the report'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TOOL_TURN, ...TOOL_TURN, 'agentEnd']);
    const history = [
      user('Write the report'),
      called([{ id: 's1', name: 'search', arguments: { q: 'revenue' } }]),
      result('s1', 'search', 'found revenue'),
      called([{ id: 'r1', name: 'report', arguments: { summary: 'Revenue grew 4%' } }]),
      result('r1', 'report', 'report accepted'),
    ];
    expect(model.requests[1]?.messages).toEqual(history.slice(0, 3));
    expect(outcome.messages).toEqual(history);
    expect(outcome).toMatchObject({
      status: 'completed',
      endReason: 'finalReport',
      finalReport: { source: 'model', arguments: { summary: 'Revenue grew 4%' } },
    });
    expect(outcome.error).toBeUndefined();
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, { turns: 2, modelCalls: 2, toolCallsRequested: 2, toolCallsExecuted: 2 });
    expectCallBound([model], 2, 3);
  });
});

describe('R10 report mode, text with no tools', () => {
  it('R10 report mode, text with no tools on a non-final turn: one guidance message, one retry, then success; the failed attempt leaves nothing in history', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [
        { text: 'I think the answer is 42.', usage: { input: 6, output: 8 } },
        { toolCalls: [{ id: 'r1', name: 'report', arguments: { summary: '42' } }], usage: { input: 12, output: 4 } },
      ],
      { clock },
    );
    const agent = createAgent({
      model,
      clock,
      tools: [searchTool(), reportTool()],
      finalReport: REPORT,
      retry: { jitter: false },
    });
    const { result: outcome, events } = await finished(agent.prompt('Answer via the report'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TEXT_TURN, 'retry', ...TOOL_TURN, 'agentEnd']);
    expect(ofType(events, 'turnEnd').map((e) => [e.turnIndex, e.reason])).toEqual([
      [0, 'complete'],
      [1, 'toolsExecuted'],
    ]);
    expect(ofType(events, 'retry')).toEqual([
      expect.objectContaining({ attempt: 1, delayMs: 0, error: FAILED_REPORT_TURN_ERROR }),
    ]);
    // The re-run's model call sees the prompt and exactly one guidance message.
    expect(model.requests[1]?.messages).toEqual([user('Answer via the report'), user(GUIDANCE)]);
    const report: AssistantMessage = {
      ...called([{ id: 'r1', name: 'report', arguments: { summary: '42' } }]),
      usage: { input: 12, output: 4 },
    };
    // Nothing of the failed attempt: no 'I think…' reply; exactly one guidance message.
    expect(outcome.messages).toEqual([
      user('Answer via the report'),
      user(GUIDANCE),
      report,
      result('r1', 'report', 'report accepted'),
    ]);
    expect(JSON.stringify(outcome.messages)).not.toContain('I think');
    expect(outcome).toMatchObject({
      status: 'completed',
      endReason: 'finalReport',
      finalReport: { source: 'model', arguments: { summary: '42' } },
    });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 2,
      turnsFailed: 1,
      modelCalls: 2,
      retries: 1,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      tokensIn: 18,
      tokensOut: 12,
      failureCodes: { reportTurnWithoutWork: 1 },
    });
    expectCallBound([model], 2, 3);
  });
});

describe('R11 report mode, invalid calls vs failing tools', () => {
  it('R11 report mode, unknown tool or invalid arguments only: a failed turn (invalid calls do not count as executed)', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [
        {
          toolCalls: [
            { id: 'u1', name: 'browse', arguments: { url: 'x' } },
            { id: 'i1', name: 'search', arguments: { q: 7 } },
          ],
        },
        { toolCalls: [{ id: 'r1', name: 'report', arguments: { summary: 'done' } }] },
      ],
      { clock },
    );
    const agent = createAgent({
      model,
      clock,
      tools: [searchTool(), reportTool()],
      finalReport: REPORT,
      retry: { jitter: false },
    });
    const { result: outcome, events } = await finished(agent.prompt('Go'));
    // The discarded reply's errors reach the model through the guidance: it learns why nothing counted.
    const guidance =
      'Your last reply ran no tool that counts as work and sent no valid report, so it did not count (' +
      'browse: Unknown tool "browse". Available tools: search, report.; ' +
      'search: Invalid arguments for tool "search": q: expected string, received number). ' +
      'Report mode: continue the task with the tools available, and end by calling the report tool "report" with valid arguments.';

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'turnEnd',
      'retry',
      ...TOOL_TURN,
      'agentEnd',
    ]);
    expect(bodies(events, 'toolExecutionEnd').map((e) => [e.turnIndex, e.toolCallId, e.result, e.isError])).toEqual([
      [0, 'u1', 'Unknown tool "browse". Available tools: search, report.', true],
      [0, 'i1', 'Invalid arguments for tool "search": q: expected string, received number', true],
      [1, 'r1', 'report accepted', false],
    ]);
    expect(ofType(events, 'toolExecutionStart').map((e) => e.toolCallId)).toEqual(['r1']);
    expect(ofType(events, 'retry')).toEqual([
      expect.objectContaining({ attempt: 1, delayMs: 0, error: FAILED_REPORT_TURN_ERROR }),
    ]);
    expect(model.requests[1]?.messages).toEqual([user('Go'), user(guidance)]);
    // The failed turn's reply (and its synthetic results, keeping parity) leaves history; one guidance message.
    expect(outcome.messages).toEqual([
      user('Go'),
      user(guidance),
      called([{ id: 'r1', name: 'report', arguments: { summary: 'done' } }]),
      result('r1', 'report', 'report accepted'),
    ]);
    expect(outcome).toMatchObject({
      status: 'completed',
      endReason: 'finalReport',
      finalReport: { source: 'model', arguments: { summary: 'done' } },
    });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 2,
      turnsFailed: 1,
      modelCalls: 2,
      retries: 1,
      toolCallsRequested: 3,
      toolCallsExecuted: 1,
      toolCallsInvalid: 2,
      failureCodes: { reportTurnWithoutWork: 1 },
    });
    expectCallBound([model], 2, 3);
  });

  it('R11 report mode: an executed tool that fails still makes the turn a success (no guidance, no retry)', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [
        { toolCalls: [{ id: 's1', name: 'search', arguments: { q: 'missing' } }] },
        { toolCalls: [{ id: 'r1', name: 'report', arguments: { summary: 'nothing found' } }] },
      ],
      { clock },
    );
    const failing = searchTool(() => {
      throw new Error('index unavailable');
    });
    const agent = createAgent({
      model,
      clock,
      tools: [failing, reportTool()],
      finalReport: REPORT,
      retry: { jitter: false },
    });
    const { result: outcome, events } = await finished(agent.prompt('Go'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TOOL_TURN, ...TOOL_TURN, 'agentEnd']);
    const history = [
      user('Go'),
      called([{ id: 's1', name: 'search', arguments: { q: 'missing' } }]),
      result('s1', 'search', 'index unavailable', true),
      called([{ id: 'r1', name: 'report', arguments: { summary: 'nothing found' } }]),
      result('r1', 'report', 'report accepted'),
    ];
    expect(model.requests[1]?.messages).toEqual(history.slice(0, 3));
    expect(outcome.messages).toEqual(history);
    expect(outcome).toMatchObject({
      status: 'completed',
      endReason: 'finalReport',
      finalReport: { source: 'model', arguments: { summary: 'nothing found' } },
    });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      toolCallsFailed: 1,
    });
    expectCallBound([model], 2, 3);
  });
});

describe('R12 report mode ends without a report', () => {
  it('R12 report mode ends by max turns without a report: a synthetic report, status failed', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [{ text: 'Searching first.', toolCalls: [{ id: 's1', name: 'search', arguments: { q: 'q3' } }] }],
      { clock },
    );
    const agent = createAgent({
      model,
      clock,
      tools: [searchTool(), reportTool()],
      finalReport: REPORT,
      maxTurns: 1,
      retry: { jitter: false },
    });
    const { result: outcome, events } = await finished(agent.prompt('Report on Q3'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TOOL_TURN, 'agentEnd']);
    expect(outcome.messages).toEqual([
      user('Report on Q3'),
      called([{ id: 's1', name: 'search', arguments: { q: 'q3' } }], { text: 'Searching first.' }),
      result('s1', 'search', 'found q3'),
    ]);
    expect(outcome).toMatchObject({ status: 'failed', endReason: 'maxTurns' });
    expect(outcome.finalReport).toEqual({
      source: 'synthetic',
      arguments: { status: 'failed', reason: 'maxTurns', lastAssistantText: 'Searching first.' },
    });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, { turns: 1, modelCalls: 1, toolCallsRequested: 1, toolCallsExecuted: 1 });
    expectCallBound([model], 1, 3);
  });

  it('R12 report mode ends by exhausted model retries without a report: a synthetic report, status failed', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel([{ error: { kind: 'overloaded' } }, { error: { kind: 'overloaded' } }], { clock });
    const agent = createAgent({
      model,
      clock,
      tools: [reportTool()],
      finalReport: REPORT,
      retry: { jitter: false, maxAttempts: 2 },
    });
    const run = agent.prompt('Report');
    await settle();
    await advance(clock, 1000);
    const { result: outcome, events } = await finished(run);

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'retry',
      'beforeModelCall',
      'messageStart',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    const failed: AssistantMessage = {
      role: 'assistant',
      content: [],
      stopReason: 'error',
      model: 'scripted',
      errorMessage: 'overloaded',
    };
    expect(outcome.messages).toEqual([user('Report'), failed]);
    expect(outcome).toMatchObject({
      status: 'failed',
      endReason: 'retryExhausted',
      error: { code: 'overloaded', message: 'overloaded' },
    });
    expect(outcome.finalReport).toEqual({
      source: 'synthetic',
      arguments: { status: 'failed', reason: 'retryExhausted', lastAssistantText: '' },
    });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 1,
      turnsFailed: 1,
      modelCalls: 2,
      retries: 1,
      backoffMs: 1000,
      failureCodes: { overloaded: 2 },
    });
    expectCallBound([model], 1, 2);
  });

  it('R12 report mode ends by abort without a report: a synthetic report, status aborted', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel([{ text: 'Let me think', stall: true }], { clock });
    const agent = createAgent({ model, clock, tools: [reportTool()], finalReport: REPORT, retry: { jitter: false } });
    const run = agent.prompt('Report');
    await settle();
    agent.abort();
    const { result: outcome, events } = await finished(run);

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    const aborted: AssistantMessage = {
      role: 'assistant',
      content: [{ type: 'text', text: 'Let me think' }],
      stopReason: 'aborted',
      model: 'scripted',
    };
    expect(bodies(events, 'turnEnd')).toEqual([
      { type: 'turnEnd', turnIndex: 0, reason: 'aborted', assistant: aborted, toolResults: [] },
    ]);
    expect(outcome.messages).toEqual([user('Report'), aborted]);
    expect(outcome).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    expect(outcome.finalReport).toEqual({
      source: 'synthetic',
      arguments: { status: 'failed', reason: 'aborted', lastAssistantText: 'Let me think' },
    });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, { turns: 1, modelCalls: 1 });
    expectCallBound([model], 1, 3);
  });
});

describe('R13 a done-style tool in chat mode', () => {
  it('R13 a "submit"/"done"-style tool in chat mode: its result is committed and the model answers it before the session ends', async () => {
    const clock = new SimulatedClock();
    const submit = defineTool({
      name: 'submit',
      description: 'Submits the answer; the task is done',
      parameters: z.object({ answer: z.string() }),
      execute: ({ answer }) => `submitted ${answer}`,
    });
    const model = scriptedModel(
      [
        { toolCalls: [{ id: 'd1', name: 'submit', arguments: { answer: '42' } }] },
        { text: 'I submitted 42; we are done.' },
      ],
      { clock },
    );
    const agent = createAgent({ model, clock, tools: [submit], retry: { jitter: false } });
    const { result: outcome, events } = await finished(agent.prompt('Solve and submit'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TOOL_TURN, ...TEXT_TURN, 'agentEnd']);
    const history = [
      user('Solve and submit'),
      called([{ id: 'd1', name: 'submit', arguments: { answer: '42' } }]),
      result('d1', 'submit', 'submitted 42'),
      said('I submitted 42; we are done.'),
    ];
    // The model saw its tool's result and answered it: the last message is the model's, not the tool's.
    expect(model.requests[1]?.messages).toEqual(history.slice(0, 3));
    expect(outcome.messages).toEqual(history);
    expect(ofType(events, 'turnEnd').map((e) => e.reason)).toEqual(['toolsExecuted', 'complete']);
    expect(outcome).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(outcome.finalReport).toBeUndefined();
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, { turns: 2, modelCalls: 2, toolCallsRequested: 1, toolCallsExecuted: 1 });
    expectCallBound([model], 2, 3);
  });
});
