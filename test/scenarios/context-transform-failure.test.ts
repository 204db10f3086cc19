import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { createAgent, type AgentEvent } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, lifecycle } from '../support/harness.js';

// A context transform is isolated like a policy: a throw is reported and counts as no transform.
describe('a context transform that throws', () => {
  it('P5 for the context transform: policyError(contextTransform), the untransformed history is sent, the run completes', async () => {
    const model = scriptedModel([{ text: 'Hello.' }]);
    const agent = createAgent({
      model,
      context: {
        maxTokens: 100_000,
        transform: () => {
          throw new Error('summarizer offline');
        },
      },
    });
    const { result, events } = await finished(agent.prompt('hi'));

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'policyError',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(events.find((e) => e.type === 'policyError')).toMatchObject({
      slot: 'contextTransform',
      turnIndex: 0,
      message: expect.stringContaining('summarizer offline'),
    });
    expect(model.requests[0]?.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect([result.status, result.endReason]).toEqual(['completed', 'naturalEnd']);
    expectInvariants(events, result.messages);
    expectCounters(result.counters, { turns: 1, modelCalls: 1 });
  });

  it('R5 with a throwing transform: the default pair-safe compaction recovers the overflow instead', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel(
      [{ text: 'x'.repeat(4_000) }, { error: { kind: 'contextOverflow' } }, { text: 'Fits now.' }],
      { clock },
    );
    const agent = createAgent({
      model,
      clock,
      retry: { jitter: false },
      context: {
        transform: (messages, { overflow }) => {
          if (overflow) throw new Error('summarizer offline');
          return messages;
        },
      },
    });
    const log: AgentEvent[] = [];
    agent.events.subscribe((event) => log.push(event));
    await agent.prompt('start').result;
    const { result, events } = await finished(agent.prompt('next'));

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'policyError',
      'contextCompacted',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    const compacted = events.find((e) => e.type === 'contextCompacted');
    expect(compacted?.type === 'contextCompacted' && compacted.after.tokens < compacted.before.tokens).toBe(true);
    // The long reply of the first run was dropped from the re-run's request; the history keeps it.
    expect(
      model.requests[2]?.messages.some(
        (m) => m.role === 'assistant' && m.content.some((b) => b.type === 'text' && b.text.length === 4_000),
      ),
    ).toBe(false);
    expect(result.messages).toHaveLength(4);
    expect([result.status, result.endReason]).toEqual(['completed', 'naturalEnd']);
    expectInvariants(log, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 3,
      overflowRecoveries: 1,
      failureCodes: { contextOverflow: 1 },
    });
  });
});
