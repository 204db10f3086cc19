import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { createAgent, defineTool, type ModelStreamEvent } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectTrusted, macrotasks, ofType, rawModel, watchTheProcess } from './harness.js';

// The hostile-input contract, timeouts: `timeouts: { modelIdleMs, toolMs }` and per tool `defineTool({ timeoutMs })`,
// on the agent's clock (a SimulatedClock here: no real waiting). A model stream silent for
// modelIdleMs (default 600,000) fails the attempt with kind `timeout` (retryable); a tool past its
// time limit (default none) is aborted and gets the error result `timed out after N ms`.

watchTheProcess();

const PROMPT = 'take your time';

/** A model call that sends one delta and then never another (it ignores its signal too). */
const silentAfterOneDelta = () =>
  rawModel([
    () =>
      (async function* () {
        yield { type: 'textDelta', delta: 'partial' };
        await new Promise(() => {});
      })(),
  ]).stream;

describe('model idle timeout', () => {
  it('a stream silent for the default 600,000 ms fails the attempt as timeout; the retry recovers', async () => {
    const clock = new SimulatedClock();
    const retry = scriptedModel([{ text: 'second try' }]);
    let calls = 0;
    const model = {
      name: 'm',
      stream: (request: never, options: { signal: AbortSignal }) =>
        calls++ === 0 ? silentAfterOneDelta()(request, options) : retry.stream(request, options),
    };
    const agent = createAgent({ model, clock, retry: { maxAttempts: 2, jitter: false } });
    const run = agent.prompt(PROMPT);
    await macrotasks(3);
    clock.increment(599_999);
    await macrotasks(2);
    expect(calls).toBe(1);
    const { result, events } = await expectTrusted(run, [PROMPT], clock);
    expect(ofType(events, 'retry').map((event) => event.error)).toEqual([
      { kind: 'timeout', message: 'model stream silent for 600000 ms', retryable: true },
    ]);
    expect(result).toMatchObject({ status: 'completed', counters: { failureCodes: { timeout: 1 } } });
    expect(JSON.stringify(events)).not.toContain('partial');
  });

  it('modelIdleMs counts silence, not the whole stream: events every 4 s never trip a 5 s limit', async () => {
    const clock = new SimulatedClock();
    const slowButAlive = async function* (): AsyncGenerator<ModelStreamEvent> {
      for (const word of ['one ', 'two ', 'three ', 'four']) {
        await new Promise<void>((resolve) => clock.setTimeout(resolve, 4_000));
        yield { type: 'textDelta', delta: word };
      }
      yield { type: 'done', stopReason: 'stop' };
    };
    const agent = createAgent({ model: rawModel([() => slowButAlive()]), clock, timeouts: { modelIdleMs: 5_000 } });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT], clock);
    expect(result.messages.at(-1)).toMatchObject({ content: [{ text: 'one two three four' }] });
  });

  it('on a clock that cannot tell the time (no now()), silence is still counted per wait', async () => {
    // The runtime re-arms one idle timer per attempt where the clock tells the time; a bare
    // setTimeout/clearTimeout clock gets a timer per awaited item instead, with the same limits.
    const clock = new SimulatedClock();
    const timeless = {
      setTimeout: (fn: () => void, ms: number) => clock.setTimeout(fn, ms),
      clearTimeout: (id: unknown) => clock.clearTimeout(id as number),
    };
    const alive = async function* (): AsyncGenerator<ModelStreamEvent> {
      for (const word of ['one ', 'two ', 'three']) {
        await new Promise<void>((resolve) => clock.setTimeout(resolve, 4_000));
        yield { type: 'textDelta', delta: word };
      }
      await new Promise<void>((resolve) => clock.setTimeout(resolve, 6_000));
      yield { type: 'done', stopReason: 'stop' };
    };
    const agent = createAgent({
      model: rawModel([() => alive()]),
      clock: timeless,
      timeouts: { modelIdleMs: 5_000 },
      retry: { maxAttempts: 1 },
    });
    const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT], clock);
    // Three 4 s gaps pass; the 6 s one trips the 5 s limit.
    expect(result).toMatchObject({
      status: 'failed',
      error: { code: 'timeout', message: 'model stream silent for 5000 ms' },
    });
    const end = ofType(events, 'messageEnd').at(-1);
    expect(end?.error).toMatchObject({ kind: 'timeout' });
    expect(end?.message.content).toMatchObject([{ text: 'one two three' }]);
  });

  it('a stream that waits longer than modelIdleMs before its first delta times out', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel([{ text: 'late', delayMs: 10_000 }, { text: 'on time' }], { clock });
    const agent = createAgent({ model, clock, timeouts: { modelIdleMs: 5_000 }, retry: { maxAttempts: 2 } });
    const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT], clock);
    expect(ofType(events, 'retry').map((event) => event.error.kind)).toEqual(['timeout']);
    expect(result.messages.at(-1)).toMatchObject({ content: [{ text: 'on time' }] });
  });

  it('when every attempt times out the run fails as retryExhausted with code timeout', async () => {
    const clock = new SimulatedClock();
    const stall = () =>
      (async function* () {
        await new Promise(() => {});
      })();
    const agent = createAgent({
      model: rawModel([stall, stall]),
      clock,
      timeouts: { modelIdleMs: 1_000 },
      retry: { maxAttempts: 2 },
    });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT], clock);
    expect(result).toMatchObject({ status: 'failed', endReason: 'retryExhausted', error: { code: 'timeout' } });
  });

  it("with streaming 'live', a timeout after shown text ends the shown message (never redone)", async () => {
    const clock = new SimulatedClock();
    const agent = createAgent({
      model: { name: 'm', stream: silentAfterOneDelta() },
      clock,
      streaming: 'live',
      timeouts: { modelIdleMs: 1_000 },
      retry: { maxAttempts: 3 },
    });
    const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT], clock);
    expect(result).toMatchObject({ status: 'failed', error: { code: 'timeout' } });
    expect(ofType(events, 'messageStart')).toHaveLength(1);
    expect(ofType(events, 'messageEnd')[0]?.message).toMatchObject({
      stopReason: 'error',
      content: [{ text: 'partial' }],
    });
  });
});

function tools() {
  const seen = { aborted: [] as string[], ran: [] as string[] };
  const make = (name: string, body: (signal: AbortSignal) => Promise<string> | string, timeoutMs?: number) =>
    defineTool({
      name,
      description: name,
      parameters: z.object({}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      execute: (_args, { signal }) => {
        seen.ran.push(name);
        signal.addEventListener('abort', () => seen.aborted.push(name));
        return body(signal);
      },
    });
  return { seen, make };
}

const forever = () => new Promise<string>(() => {});

describe('tool timeouts', () => {
  it('timeouts.toolMs: a tool that ignores its signal is aborted and gets `timed out after N ms`', async () => {
    const clock = new SimulatedClock();
    const { seen, make } = tools();
    const model = scriptedModel([{ toolCalls: [{ id: 'c1', name: 'hang' }] }, { text: 'moving on' }]);
    const agent = createAgent({ model, clock, tools: [make('hang', forever)], timeouts: { toolMs: 30_000 } });
    const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT], clock);
    expect(result.messages.find((message) => message.role === 'toolResult')).toMatchObject({
      content: 'timed out after 30000 ms',
      isError: true,
    });
    expect(ofType(events, 'turnEnd').map((event) => event.reason)).toEqual(['toolsExecuted', 'complete']);
    expect(seen.aborted).toEqual(['hang']);
    expect(result.counters).toMatchObject({ toolCallsExecuted: 1, toolCallsFailed: 1 });
    // The model saw the result and the run went on.
    expect(model.requests[1]?.messages.at(-1)).toMatchObject({
      role: 'toolResult',
      content: 'timed out after 30000 ms',
    });
  });

  it('defineTool({ timeoutMs }) overrides timeouts.toolMs; a tool within its limit is untouched', async () => {
    const clock = new SimulatedClock();
    const { seen, make } = tools();
    const quick = make(
      'quick',
      () => new Promise<string>((resolve) => clock.setTimeout(() => resolve('quick ok'), 200)),
      500,
    );
    const strict = make('strict', forever, 1_000);
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'quick' },
          { id: 'b', name: 'strict' },
        ],
      },
      { text: 'done' },
    ]);
    const agent = createAgent({ model, clock, tools: [quick, strict], timeouts: { toolMs: 60_000 } });
    const run = agent.prompt(PROMPT);
    // Time moves in steps smaller than the limits, so each timer fires at its own moment.
    for (let ms = 0; ms < 1_000; ms += 100) {
      await macrotasks(2);
      clock.increment(100);
    }
    const { result } = await expectTrusted(run, [PROMPT], clock);
    expect(result.messages.filter((message) => message.role === 'toolResult')).toMatchObject([
      { toolCallId: 'a', content: 'quick ok', isError: false },
      { toolCallId: 'b', content: 'timed out after 1000 ms', isError: true },
    ]);
    expect(seen.aborted).toEqual(['strict']);
  });

  it('without any time limit a slow tool is waited for (the default is none)', async () => {
    const clock = new SimulatedClock();
    const { make } = tools();
    const slow = make(
      'slow',
      () => new Promise<string>((resolve) => clock.setTimeout(() => resolve('finally'), 3_600_000)),
    );
    const agent = createAgent({
      model: scriptedModel([{ toolCalls: [{ id: 'a', name: 'slow' }] }, { text: 'done' }]),
      clock,
      tools: [slow],
    });
    const run = agent.prompt(PROMPT);
    await macrotasks(3);
    clock.increment(3_600_000);
    const { result } = await expectTrusted(run, [PROMPT], clock);
    expect(result.messages.find((message) => message.role === 'toolResult')).toMatchObject({
      content: 'finally',
      isError: false,
    });
  });

  it('sequential tools: the next call starts once the previous one timed out', async () => {
    const clock = new SimulatedClock();
    const { seen, make } = tools();
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'hang' },
          { id: 'b', name: 'after' },
        ],
      },
      { text: 'done' },
    ]);
    const agent = createAgent({
      model,
      clock,
      toolExecution: 'sequential',
      tools: [make('hang', forever, 2_000), make('after', () => 'after ok')],
    });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT], clock);
    expect(seen.ran).toEqual(['hang', 'after']);
    expect(
      result.messages
        .filter((message) => message.role === 'toolResult')
        .map((message) => message.role === 'toolResult' && message.content),
    ).toEqual(['timed out after 2000 ms', 'after ok']);
  });

  it('a tool that resolves after its timeout does not change the published result', async () => {
    const clock = new SimulatedClock();
    const { make } = tools();
    const late = make(
      'late',
      () => new Promise<string>((resolve) => clock.setTimeout(() => resolve('too late'), 5_000)),
      1_000,
    );
    const agent = createAgent({
      model: scriptedModel([{ toolCalls: [{ id: 'a', name: 'late' }] }, { text: 'done' }]),
      clock,
      tools: [late],
    });
    const { result, events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT], clock);
    clock.increment(10_000);
    await macrotasks(2);
    expect(ofType(events, 'toolExecutionEnd').map((event) => event.result)).toEqual(['timed out after 1000 ms']);
    expect(JSON.stringify(result.messages)).not.toContain('too late');
  });
});
