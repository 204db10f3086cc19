import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { createAgent, type AssistantMessage } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, lifecycle, settle } from '../support/harness.js';
import {
  advance,
  bodies,
  called,
  expectCallBound,
  modelsCalled,
  ofType,
  result,
  said,
  searchTool,
  TEXT_TURN,
  TOOL_TURN,
  user,
} from './issue5-fixtures.js';

// Scenarios R1–R4: retries with backoff on the simulated clock, model fallback, abort during a
// backoff, and the call budget (model calls ≤ maxTurns × retry.maxAttempts, per model).

const FAILED_TEXT = 'PARTIAL-TEXT-OF-A-FAILED-ATTEMPT';

describe('R1 rate-limited then success', () => {
  it('R1 rate-limited (retry-after 2 s) then success: waits 2 s on the simulated clock; one messageStart/messageEnd; the partial text never appears', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [
        {
          text: FAILED_TEXT,
          usage: { input: 10, output: 3 },
          error: { kind: 'rateLimit', retryAfterMs: 2000, message: 'slow down' },
        },
        { text: 'Hello there', usage: { input: 10, output: 4 } },
      ],
      { clock },
    );
    const agent = createAgent({ model, clock, retry: { jitter: false } });
    const run = agent.prompt('hi');

    await settle();
    expect(model.calls).toBe(1);
    await advance(clock, 1999);
    expect(model.calls).toBe(1);
    expect(agent.running).toBe(true);
    await advance(clock, 1);
    const { result: outcome, events } = await finished(run);

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'retry',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(bodies(events, 'retry')).toEqual([
      {
        type: 'retry',
        turnIndex: 0,
        attempt: 1,
        delayMs: 2000,
        error: { kind: 'rateLimit', message: 'slow down', retryable: true, retryAfterMs: 2000 },
      },
    ]);
    const reply: AssistantMessage = { ...said('Hello there'), usage: { input: 10, output: 4 } };
    expect(ofType(events, 'messageEnd').map((e) => e.message)).toEqual([reply]);
    expect(JSON.stringify(events)).not.toContain(FAILED_TEXT);
    expect(outcome.messages).toEqual([user('hi'), reply]);
    // The retry re-sends the same request; the failed attempt added nothing to it.
    expect(model.requests.map((r) => r.messages)).toEqual([[user('hi')], [user('hi')]]);
    expect(ofType(events, 'beforeModelCall').map((e) => e.messages)).toEqual([[user('hi')], [user('hi')]]);
    expect(outcome).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(outcome.error).toBeUndefined();
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 1,
      modelCalls: 2,
      retries: 1,
      backoffMs: 2000,
      tokensIn: 20,
      tokensOut: 7,
      failureCodes: { rateLimit: 1 },
    });
    expectCallBound([model], 1, 3);
  });

  it('R1 without retry-after the backoff is exponential on the simulated clock (1 s, then 2 s)', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [{ error: { kind: 'overloaded' } }, { error: { kind: 'network' } }, { text: 'Recovered' }],
      { clock },
    );
    const agent = createAgent({ model, clock, retry: { jitter: false } });
    const run = agent.prompt('hi');

    await settle();
    expect(model.calls).toBe(1);
    await advance(clock, 999);
    expect(model.calls).toBe(1);
    await advance(clock, 1);
    expect(model.calls).toBe(2);
    await advance(clock, 1999);
    expect(model.calls).toBe(2);
    await advance(clock, 1);
    const { result: outcome, events } = await finished(run);

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
      'turnEnd',
      'agentEnd',
    ]);
    expect(bodies(events, 'retry')).toEqual([
      {
        type: 'retry',
        turnIndex: 0,
        attempt: 1,
        delayMs: 1000,
        error: { kind: 'overloaded', message: 'overloaded', retryable: true },
      },
      {
        type: 'retry',
        turnIndex: 0,
        attempt: 2,
        delayMs: 2000,
        error: { kind: 'network', message: 'network', retryable: true },
      },
    ]);
    expect(outcome.messages).toEqual([user('hi'), said('Recovered')]);
    expect(outcome).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 1,
      modelCalls: 3,
      retries: 2,
      backoffMs: 3000,
      failureCodes: { overloaded: 1, network: 1 },
    });
    expectCallBound([model], 1, 3);
  });
});

describe('R2 fallback models and non-retryable errors', () => {
  it('R2 retries exhausted with fallback models [f1, f2]: modelFallback events in order, success from f2, no error messageEnd', async () => {
    const clock = new SimulatedClock();
    const primary = scriptedModel(
      [{ text: FAILED_TEXT, error: { kind: 'overloaded' } }, { error: { kind: 'overloaded' } }],
      { name: 'primary', clock },
    );
    const f1 = scriptedModel([{ error: { kind: 'timeout' } }, { text: FAILED_TEXT, error: { kind: 'timeout' } }], {
      name: 'f1',
      clock,
    });
    const f2 = scriptedModel([{ text: 'Answer from f2', usage: { input: 7, output: 2 } }], { name: 'f2', clock });
    const agent = createAgent({
      model: primary,
      fallbackModels: [f1, f2],
      clock,
      retry: { jitter: false, maxAttempts: 2 },
    });
    const run = agent.prompt('hi');
    await settle();
    await advance(clock, 1000);
    expect([primary.calls, f1.calls, f2.calls]).toEqual([2, 1, 0]);
    await advance(clock, 1000);
    const { result: outcome, events } = await finished(run);

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'retry',
      'beforeModelCall',
      'modelFallback',
      'beforeModelCall',
      'retry',
      'beforeModelCall',
      'modelFallback',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(modelsCalled(events)).toEqual(['primary', 'primary', 'f1', 'f1', 'f2']);
    expect(bodies(events, 'modelFallback')).toEqual([
      // Each fallback names the failure of the last attempt on the model it leaves.
      {
        type: 'modelFallback',
        turnIndex: 0,
        from: 'primary',
        to: 'f1',
        error: { kind: 'overloaded', message: 'overloaded', retryable: true },
      },
      {
        type: 'modelFallback',
        turnIndex: 0,
        from: 'f1',
        to: 'f2',
        error: { kind: 'timeout', message: 'timeout', retryable: true },
      },
    ]);
    expect(bodies(events, 'retry')).toEqual([
      {
        type: 'retry',
        turnIndex: 0,
        attempt: 1,
        delayMs: 1000,
        error: { kind: 'overloaded', message: 'overloaded', retryable: true },
      },
      {
        type: 'retry',
        turnIndex: 0,
        attempt: 1,
        delayMs: 1000,
        error: { kind: 'timeout', message: 'timeout', retryable: true },
      },
    ]);
    const reply: AssistantMessage = { ...said('Answer from f2', { model: 'f2' }), usage: { input: 7, output: 2 } };
    expect(ofType(events, 'messageEnd').map((e) => e.message)).toEqual([reply]);
    expect(JSON.stringify(events)).not.toContain(FAILED_TEXT);
    expect(outcome.messages).toEqual([user('hi'), reply]);
    expect(outcome).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 1,
      modelCalls: 5,
      retries: 2,
      modelFallbacks: 2,
      backoffMs: 2000,
      tokensIn: 7,
      tokensOut: 2,
      failureCodes: { overloaded: 2, timeout: 2 },
    });
    expectCallBound([primary, f1, f2], 1, 2);
  });

  it('R2 a non-retryable error (auth) is not retried and goes to the fallback model', async () => {
    const clock = new SimulatedClock();
    const primary = scriptedModel(
      [{ text: FAILED_TEXT, error: { kind: 'auth', message: 'invalid api key', status: 401 } }],
      { name: 'primary', clock },
    );
    const f1 = scriptedModel([{ text: 'Answer from f1' }], { name: 'f1', clock });
    const agent = createAgent({ model: primary, fallbackModels: [f1], clock, retry: { jitter: false } });
    const { result: outcome, events } = await finished(agent.prompt('hi'));

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'modelFallback',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(modelsCalled(events)).toEqual(['primary', 'f1']);
    expect(bodies(events, 'modelFallback')).toEqual([
      {
        type: 'modelFallback',
        turnIndex: 0,
        from: 'primary',
        to: 'f1',
        error: { kind: 'auth', message: 'invalid api key', retryable: false, status: 401 },
      },
    ]);
    expect(JSON.stringify(events)).not.toContain(FAILED_TEXT);
    expect(outcome.messages).toEqual([user('hi'), said('Answer from f1', { model: 'f1' })]);
    expect(outcome).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, { turns: 1, modelCalls: 2, modelFallbacks: 1, failureCodes: { auth: 1 } });
    expectCallBound([primary, f1], 1, 3);
  });

  it('R2 a non-retryable error (badRequest) without a fallback fails at once with its failure code', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [{ text: 'Half an answer', error: { kind: 'badRequest', message: 'messages: field required', status: 400 } }],
      { clock },
    );
    const agent = createAgent({ model, clock, retry: { jitter: false } });
    const { result: outcome, events } = await finished(agent.prompt('hi'));

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
    const failed: AssistantMessage = {
      role: 'assistant',
      content: [{ type: 'text', text: 'Half an answer' }],
      stopReason: 'error',
      model: 'scripted',
      errorMessage: 'messages: field required',
    };
    expect(ofType(events, 'messageEnd').map((e) => e.message)).toEqual([failed]);
    expect(bodies(events, 'turnEnd')).toEqual([
      { type: 'turnEnd', turnIndex: 0, reason: 'error', assistant: failed, toolResults: [] },
    ]);
    expect(outcome).toMatchObject({
      status: 'failed',
      endReason: 'fatalError',
      error: { code: 'badRequest', message: 'messages: field required' },
    });
    expect(outcome.messages).toEqual([user('hi'), failed]);
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, { turns: 1, turnsFailed: 1, modelCalls: 1, failureCodes: { badRequest: 1 } });
    expectCallBound([model], 1, 3);
  });

  it('R2 retryable errors that exhaust every attempt of every model end failed with retryExhausted', async () => {
    const clock = new SimulatedClock();
    const primary = scriptedModel([{ error: { kind: 'rateLimit' } }, { error: { kind: 'rateLimit' } }], {
      name: 'primary',
      clock,
    });
    const f1 = scriptedModel(
      [{ error: { kind: 'overloaded' } }, { text: 'cut', error: { kind: 'overloaded', message: 'still overloaded' } }],
      { name: 'f1', clock },
    );
    const agent = createAgent({
      model: primary,
      fallbackModels: [f1],
      clock,
      retry: { jitter: false, maxAttempts: 2 },
    });
    const run = agent.prompt('hi');
    await settle();
    await advance(clock, 1000);
    await advance(clock, 1000);
    const { result: outcome, events } = await finished(run);

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'retry',
      'beforeModelCall',
      'modelFallback',
      'beforeModelCall',
      'retry',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(modelsCalled(events)).toEqual(['primary', 'primary', 'f1', 'f1']);
    const failed: AssistantMessage = {
      role: 'assistant',
      content: [{ type: 'text', text: 'cut' }],
      stopReason: 'error',
      model: 'f1',
      errorMessage: 'still overloaded',
    };
    expect(bodies(events, 'turnEnd')).toEqual([
      { type: 'turnEnd', turnIndex: 0, reason: 'error', assistant: failed, toolResults: [] },
    ]);
    expect(outcome).toMatchObject({
      status: 'failed',
      endReason: 'retryExhausted',
      error: { code: 'overloaded', message: 'still overloaded' },
    });
    expect(outcome.messages).toEqual([user('hi'), failed]);
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 1,
      turnsFailed: 1,
      modelCalls: 4,
      retries: 2,
      modelFallbacks: 1,
      backoffMs: 2000,
      failureCodes: { rateLimit: 2, overloaded: 2 },
    });
    expectCallBound([primary, f1], 1, 2);
  });

  it('R2 the fallback model sticks for the rest of the run', async () => {
    const clock = new SimulatedClock();
    const primary = scriptedModel([{ error: { kind: 'auth' } }], { name: 'primary', clock });
    const f1 = scriptedModel(
      [{ toolCalls: [{ id: 's1', name: 'search', arguments: { q: 'notes' } }] }, { text: 'Done' }],
      { name: 'f1', clock },
    );
    const agent = createAgent({
      model: primary,
      fallbackModels: [f1],
      tools: [searchTool()],
      clock,
      retry: { jitter: false },
    });
    const { result: outcome, events } = await finished(agent.prompt('hi'));

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'modelFallback',
      ...TOOL_TURN.slice(1),
      ...TEXT_TURN,
      'agentEnd',
    ]);
    expect(modelsCalled(events)).toEqual(['primary', 'f1', 'f1']);
    expect([primary.calls, f1.calls]).toEqual([1, 2]);
    const call = called([{ id: 's1', name: 'search', arguments: { q: 'notes' } }], { model: 'f1' });
    expect(outcome.messages).toEqual([
      user('hi'),
      call,
      result('s1', 'search', 'found notes'),
      said('Done', { model: 'f1' }),
    ]);
    expect(outcome).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 2,
      modelCalls: 3,
      modelFallbacks: 1,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      failureCodes: { auth: 1 },
    });
    expectCallBound([primary, f1], 2, 3);
  });
});

describe('R3 abort during a backoff', () => {
  it('R3 abort during a backoff ends the run at once as aborted; no further model call', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [{ text: FAILED_TEXT, error: { kind: 'rateLimit', retryAfterMs: 30_000 } }, { text: 'never streamed' }],
      { clock },
    );
    const agent = createAgent({ model, clock, retry: { jitter: false } });
    const run = agent.prompt('hi');
    let ended = false;
    void run.result.then(() => (ended = true));
    await settle();
    await advance(clock, 10_000);
    expect(ended).toBe(false);

    agent.abort();
    await settle();
    // No clock time passed since the abort: the backoff was cut short.
    expect(ended).toBe(true);
    const { result: outcome, events } = await finished(run);
    await advance(clock, 60_000);
    expect(model.calls).toBe(1);

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'retry',
      'messageStart',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    const aborted: AssistantMessage = { role: 'assistant', content: [], stopReason: 'aborted', model: 'scripted' };
    expect(bodies(events, 'turnEnd')).toEqual([
      { type: 'turnEnd', turnIndex: 0, reason: 'aborted', assistant: aborted, toolResults: [] },
    ]);
    expect(JSON.stringify(events)).not.toContain(FAILED_TEXT);
    expect(outcome).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    expect(outcome.error).toEqual({ code: 'aborted', message: 'aborted' });
    expect(outcome.messages).toEqual([user('hi'), aborted]);
    expect(agent.running).toBe(false);
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 1,
      modelCalls: 1,
      retries: 1,
      backoffMs: 30_000,
      failureCodes: { rateLimit: 1 },
    });
    expectCallBound([model], 1, 3);
  });
});

describe('R4 the call budget', () => {
  it('R4 a model that always fails is called exactly retry.maxAttempts times: retries are never multiplied by nested layers', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(() => ({ error: { kind: 'network' } }), { clock });
    const agent = createAgent({ model, clock, retry: { jitter: false, maxAttempts: 3 } });
    const run = agent.prompt('hi');
    await settle();
    await advance(clock, 1000);
    await advance(clock, 2000);
    const { result: outcome, events } = await finished(run);
    // Far more time than any backoff: nothing else is called.
    await advance(clock, 600_000);

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
    expect(ofType(events, 'retry').map((e) => [e.attempt, e.delayMs])).toEqual([
      [1, 1000],
      [2, 2000],
    ]);
    expect(outcome).toMatchObject({
      status: 'failed',
      endReason: 'retryExhausted',
      error: { code: 'network', message: 'network' },
    });
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
});
