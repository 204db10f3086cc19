import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { createAgent, type AssistantMessage, type Message } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { deferred, expectCounters, expectInvariants, finished, lifecycle, settle } from '../support/harness.js';
import {
  advance,
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

// Issue 5 edge cases: the call budget per turn, late overflow recovery, max turns vs. a final answer, report-mode counting.

const REPORT = { toolName: 'report' };
const FAILED_REPORT_TURN_ERROR = {
  kind: 'unknown',
  message: 'report mode: the turn ran no valid tool and sent no final report',
  retryable: false,
};

describe('R4', () => {
  it('R4 with maxTurns 1 the only turn still gets all retry.maxAttempts attempts (3 calls ≤ 1 × 3)', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(() => ({ error: { kind: 'network' } }), { clock });
    const agent = createAgent({ model, clock, maxTurns: 1, retry: { jitter: false, maxAttempts: 3 } });
    const run = agent.prompt('hi');
    await settle();
    await advance(clock, 1000);
    await advance(clock, 2000);
    const { result: outcome, events } = await finished(run);

    expect(model.calls).toBe(3);
    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'retry',
      'beforeModelCall',
      'retry',
      'beforeModelCall',
      'messageStart',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(outcome).toMatchObject({ status: 'failed', endReason: 'retryExhausted', error: { code: 'network' } });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 1,
      turnsFailed: 1,
      modelCalls: 3,
      retries: 2,
      backoffMs: 3000,
      failureCodes: { network: 3 },
    });
    expectCallBound([model], 1, 3);
  });

  it('R4 with maxTurns 2 each turn gets its retry.maxAttempts attempts and the run makes exactly maxTurns × maxAttempts calls', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [
        { error: { kind: 'overloaded' } },
        { error: { kind: 'overloaded' } },
        { toolCalls: [{ id: 's1', name: 'search', arguments: { q: 'a' } }] },
        { error: { kind: 'timeout' } },
        { error: { kind: 'timeout' } },
        { error: { kind: 'timeout' } },
      ],
      { clock },
    );
    const agent = createAgent({
      model,
      clock,
      tools: [searchTool()],
      maxTurns: 2,
      retry: { jitter: false, maxAttempts: 3 },
    });
    const run = agent.prompt('hi');
    await settle();
    for (const ms of [1000, 2000, 1000, 2000]) await advance(clock, ms);
    const { result: outcome, events } = await finished(run);

    expect(model.calls).toBe(6);
    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'retry',
      'beforeModelCall',
      'retry',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'toolExecutionStart',
      'toolExecutionEnd',
      'turnEnd',
      'turnStart',
      'beforeModelCall',
      'retry',
      'beforeModelCall',
      'retry',
      'beforeModelCall',
      'messageStart',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(outcome).toMatchObject({ status: 'failed', endReason: 'retryExhausted', error: { code: 'timeout' } });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 2,
      turnsFailed: 1,
      modelCalls: 6,
      retries: 4,
      backoffMs: 6000,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      failureCodes: { overloaded: 2, timeout: 3 },
    });
    expectCallBound([model], 2, 3);
  });
});

describe('R7', () => {
  it('R7 a recovery that finishes after the abort changes nothing: no model call, counters still agree with the log', async () => {
    const clock = new SimulatedClock();
    const gate = deferred();
    const model = scriptedModel([{ error: { kind: 'contextOverflow' } }, { text: 'never streamed' }], { clock });
    const transform = async (messages: Message[], info: { overflow: boolean }) => {
      if (info.overflow) await gate.promise;
      return info.overflow ? messages.slice(1) : messages;
    };
    const agent = createAgent({ model, clock, retry: { jitter: false }, context: { maxTokens: 100_000, transform } });
    const run = agent.prompt(['first', 'second']);
    await settle();
    agent.abort();
    const { result: outcome, events } = await finished(run);
    gate.resolve();
    await settle();
    await advance(clock, 60_000);

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'messageStart',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(model.calls).toBe(1);
    expect(agent.counters).toEqual(outcome.counters);
    expectInvariants(events, outcome.messages);
    expectCounters(agent.counters, { turns: 1, modelCalls: 1, failureCodes: { contextOverflow: 1 } });
    expectCallBound([model], 1, 3);
  });
});

describe('R8', () => {
  it('R8 a natural end on the last allowed turn is a natural end, not maxTurns', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [{ toolCalls: [{ id: 's1', name: 'search', arguments: { q: 'a' } }] }, { text: 'Here is the answer.' }],
      { clock },
    );
    const agent = createAgent({ model, clock, tools: [searchTool()], maxTurns: 2, retry: { jitter: false } });
    const { result: outcome, events } = await finished(agent.prompt('hi'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TOOL_TURN, ...TEXT_TURN, 'agentEnd']);
    expect(outcome).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(outcome.messages).toEqual([
      user('hi'),
      called([{ id: 's1', name: 'search', arguments: { q: 'a' } }]),
      result('s1', 'search', 'found a'),
      said('Here is the answer.'),
    ]);
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, { turns: 2, modelCalls: 2, toolCallsRequested: 1, toolCallsExecuted: 1 });
    expectCallBound([model], 2, 3);
  });
});

describe('R10–R12', () => {
  it('R10 the re-run model call sees exactly one guidance message, and the report-mode retry event carries the failed turn’s index', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [
        { text: 'I think the answer is 42.' },
        { toolCalls: [{ id: 'r1', name: 'report', arguments: { summary: '42' } }] },
      ],
      { clock },
    );
    const agent = createAgent({ model, clock, tools: [reportTool()], finalReport: REPORT, retry: { jitter: false } });
    const { result: outcome, events } = await finished(agent.prompt('Answer via the report'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TEXT_TURN, 'retry', ...TOOL_TURN, 'agentEnd']);
    expect(model.requests[1]?.messages).toEqual([user('Answer via the report'), user(GUIDANCE)]);
    expect(ofType(events, 'beforeModelCall')[1]?.messages).toEqual([user('Answer via the report'), user(GUIDANCE)]);
    expect(ofType(events, 'retry')).toEqual([
      expect.objectContaining({ turnIndex: 0, attempt: 1, delayMs: 0, error: FAILED_REPORT_TURN_ERROR }),
    ]);
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 2,
      turnsFailed: 1,
      modelCalls: 2,
      retries: 1,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      failureCodes: { reportTurnWithoutWork: 1 },
    });
    expectCallBound([model], 2, 3);
  });

  it('R12 report mode ends when failed turns exhaust their retries: a synthetic report, status failed; every failed turn counted', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel([{ text: 'one' }, { text: 'two' }], { clock });
    const agent = createAgent({
      model,
      clock,
      tools: [reportTool()],
      finalReport: REPORT,
      retry: { jitter: false, maxAttempts: 2 },
    });
    const { result: outcome, events } = await finished(agent.prompt('Report'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TEXT_TURN, 'retry', ...TEXT_TURN, 'agentEnd']);
    expect(model.requests[1]?.messages).toEqual([user('Report'), user(GUIDANCE)]);
    const last: AssistantMessage = said('two');
    expect(outcome.messages).toEqual([user('Report'), user(GUIDANCE), last]);
    expect(outcome).toMatchObject({ status: 'failed', endReason: 'retryExhausted' });
    expect(outcome.finalReport).toEqual({
      source: 'synthetic',
      arguments: { status: 'failed', reason: 'retryExhausted', lastAssistantText: 'two' },
    });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 2,
      turnsFailed: 2,
      modelCalls: 2,
      retries: 1,
      failureCodes: { reportTurnWithoutWork: 2 },
    });
    expectCallBound([model], 2, 2);
  });
});
