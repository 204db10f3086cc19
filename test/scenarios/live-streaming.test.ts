import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { createAgent, type AgentEvent, type Model, type ModelStreamEvent } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { deferred, expectCounters, expectInvariants, finished, lifecycle, settle } from '../support/harness.js';

// `streaming: 'live'`: deltas go out as they arrive; an attempt that showed text is never redone.
describe("streaming: 'live'", () => {
  it('publishes messageStart and the deltas while the provider is still streaming, then one messageEnd', async () => {
    const gate = deferred();
    const model: Model = {
      name: 'slow',
      async *stream(): AsyncGenerator<ModelStreamEvent> {
        yield { type: 'start' };
        yield { type: 'textDelta', delta: 'Hel' };
        await gate.promise;
        yield { type: 'textDelta', delta: 'lo.' };
        yield { type: 'done', stopReason: 'stop' };
      },
    };
    const agent = createAgent({ model, streaming: 'live' });
    const run = agent.prompt('hi');
    const seen: AgentEvent[] = [];
    run.events.subscribe((event) => seen.push(event));
    await settle();
    expect(seen.map((e) => e.type)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'messageStart',
      'messageUpdate',
    ]);
    gate.resolve();
    const { result, events } = await finished(run);

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
    expect(
      events
        .filter((e) => e.type === 'messageUpdate')
        .map((e) => e.type === 'messageUpdate' && e.delta.type === 'text' && e.delta.text),
    ).toEqual(['Hel', 'lo.']);
    expect([result.status, result.endReason]).toEqual(['completed', 'naturalEnd']);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, modelCalls: 1 });
  });

  it('R1 live: a rate limit before any text is still retried, with one messageStart for the logical message', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel([{ error: { kind: 'rateLimit', retryAfterMs: 1_000 } }, { text: 'Recovered.' }], {
      clock,
    });
    const agent = createAgent({ model, clock, streaming: 'live', retry: { jitter: false } });
    const run = agent.prompt('hi');
    await settle();
    clock.increment(1_000);
    const { result, events } = await finished(run);

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
    expect([result.status, result.endReason]).toEqual(['completed', 'naturalEnd']);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 1,
      modelCalls: 2,
      retries: 1,
      backoffMs: 1_000,
      failureCodes: { rateLimit: 1 },
    });
  });

  it('a rate limit after text was shown is not retried: the shown message ends with the error and the run fails', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [{ text: 'Partly shown', error: { kind: 'rateLimit', retryAfterMs: 1_000 } }, { text: 'never asked' }],
      { clock },
    );
    const agent = createAgent({ model, clock, streaming: 'live', retry: { jitter: false } });
    const { result, events } = await finished(agent.prompt('hi'));

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
    const end = events.find((e) => e.type === 'messageEnd');
    expect(end?.type === 'messageEnd' && [end.message.stopReason, end.message.content]).toEqual([
      'error',
      [{ type: 'text', text: 'Partly shown' }],
    ]);
    expect(model.calls).toBe(1);
    expect(result).toMatchObject({ status: 'failed', endReason: 'retryExhausted', error: { code: 'rateLimit' } });
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, turnsFailed: 1, modelCalls: 1, failureCodes: { rateLimit: 1 } });
  });
});
