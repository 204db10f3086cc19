import { describe, expect, it } from 'vitest';
import { createAgent } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, lifecycle } from '../support/harness.js';

// Every other R test runs on SimulatedClock; this one proves the default (real) clock is wired.
describe('retries on the default clock', () => {
  it('R1 on the default clock: a retry-after of 5 ms is waited out for real and the retry succeeds', async () => {
    const model = scriptedModel([
      { text: 'lost', error: { kind: 'rateLimit', retryAfterMs: 5 } },
      { text: 'Recovered.' },
    ]);
    const agent = createAgent({ model, retry: { jitter: false } });
    const startedAt = performance.now();
    const { result, events } = await finished(agent.prompt('hi'));

    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(4);
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
      backoffMs: 5,
      failureCodes: { rateLimit: 1 },
    });
  });
});
