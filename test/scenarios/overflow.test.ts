import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { createAgent, type AssistantMessage, type Message, type PostTurnContext } from 'agentchart';
import { createContextGuard } from '../../src/context/guard.js';
import { scriptedModel } from 'agentchart/testing';
import { deferred, expectCounters, expectInvariants, finished, lifecycle, settle } from '../support/harness.js';
import { bodies, called, expectCallBound, ofType, result, said, searchTool, user } from './issue5-fixtures.js';

// Scenarios R5–R7: context overflow recovery. The provider's overflow is a scripted
// `error: { kind: 'contextOverflow' }`; recovery calls the context transform with overflow=true,
// announces contextCompacted and re-runs the same turn once, without a second turnStart or messageStart.

const FAILED_TEXT = 'PARTIAL-TEXT-OF-AN-OVERFLOWED-ATTEMPT';
const MAX_TOKENS = 100_000;
const estimate = (messages: Message[]) => createContextGuard({ maxTokens: MAX_TOKENS }).estimate(messages);

/** A transform that drops the oldest message on overflow (keeps parity for these histories) and records its calls. */
function droppingTransform() {
  const seen: Array<{ overflow: boolean; messages: Message[] }> = [];
  const flags: boolean[] = [];
  const transform = (messages: Message[], info: { overflow: boolean }) => {
    flags.push(info.overflow);
    seen.push({ overflow: info.overflow, messages: messages.slice() });
    return info.overflow ? messages.slice(1) : messages;
  };
  return { flags, seen, transform };
}

describe('R5 overflow then success', () => {
  it('R5 overflow then success: transform called with overflow=false then true; contextCompacted; the retry sends fewer messages; one messageStart/messageEnd; no extra turnStart', async () => {
    const clock = new SimulatedClock();
    const { seen, transform } = droppingTransform();
    const model = scriptedModel(
      [
        {
          text: FAILED_TEXT,
          usage: { input: 50, output: 1 },
          error: { kind: 'contextOverflow', message: 'prompt is too long' },
        },
        { text: 'Fits now', usage: { input: 20, output: 3 } },
      ],
      { clock },
    );
    const agent = createAgent({
      model,
      clock,
      retry: { jitter: false },
      context: { maxTokens: MAX_TOKENS, transform },
    });
    const { result: outcome, events } = await finished(agent.prompt(['first', 'second', 'third']));

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'contextCompacted',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    const prompt = [user('first'), user('second'), user('third')];
    // Once per model call with overflow=false, then once in recovery with overflow=true, both on the turn's messages.
    expect(seen).toEqual([
      { overflow: false, messages: prompt },
      { overflow: true, messages: prompt },
    ]);
    expect(model.requests.map((r) => r.messages)).toEqual([prompt, prompt.slice(1)]);
    expect(ofType(events, 'beforeModelCall').map((e) => e.messages)).toEqual([prompt, prompt.slice(1)]);
    expect(bodies(events, 'contextCompacted')).toEqual([
      {
        type: 'contextCompacted',
        turnIndex: 0,
        before: { messages: 3, tokens: estimate(prompt) },
        after: { messages: 2, tokens: estimate(prompt.slice(1)) },
      },
    ]);
    const reply: AssistantMessage = { ...said('Fits now'), usage: { input: 20, output: 3 } };
    expect(ofType(events, 'messageEnd').map((e) => e.message)).toEqual([reply]);
    expect(JSON.stringify(events)).not.toContain(FAILED_TEXT);
    // The transform shapes requests only: the history keeps every message.
    expect(outcome.messages).toEqual([...prompt, reply]);
    expect(outcome).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 1,
      modelCalls: 2,
      overflowRecoveries: 1,
      tokensIn: 70,
      tokensOut: 4,
      failureCodes: { contextOverflow: 1 },
    });
    expectCallBound([model], 1, 3);
  });

  it('R5 without a transform, recovery uses the default compaction, which keeps tool-call/result pairs together', async () => {
    const clock = new SimulatedClock();
    const big = 'x'.repeat(4000);
    const model = scriptedModel(
      [
        { toolCalls: [{ id: 's1', name: 'search', arguments: { q: 'one' } }] },
        { toolCalls: [{ id: 's2', name: 'search', arguments: { q: 'two' } }] },
        { error: { kind: 'contextOverflow' } },
        { text: 'Summary' },
      ],
      { clock },
    );
    const agent = createAgent({
      model,
      clock,
      tools: [searchTool(({ q }) => `${q}: ${big}`)],
      retry: { jitter: false },
      context: { maxTokens: MAX_TOKENS },
    });
    const { result: outcome, events } = await finished(agent.prompt('Summarize'));

    const toolTurn = [
      'turnStart',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'toolExecutionStart',
      'toolExecutionEnd',
      'turnEnd',
    ];
    expect(lifecycle(events)).toEqual([
      'agentStart',
      ...toolTurn,
      ...toolTurn,
      'turnStart',
      'beforeModelCall',
      'contextCompacted',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    const history = [
      user('Summarize'),
      called([{ id: 's1', name: 'search', arguments: { q: 'one' } }]),
      result('s1', 'search', `one: ${big}`),
      called([{ id: 's2', name: 'search', arguments: { q: 'two' } }]),
      result('s2', 'search', `two: ${big}`),
    ];
    expect(model.requests[2]?.messages).toEqual(history);
    // The oldest tool pair is dropped whole (a marker note takes its place); the anchor and the last pair stay.
    const retried = model.requests[3]?.messages ?? [];
    expect(retried).toEqual([
      user('Summarize'),
      expect.objectContaining({ role: 'custom', customType: 'contextCompacted', data: { removed: 2 } }),
      history[3],
      history[4],
    ]);
    const [compacted] = bodies(events, 'contextCompacted');
    expect(compacted).toMatchObject({ turnIndex: 2, before: { messages: 5 }, after: { messages: 4 } });
    expect(compacted?.after.tokens).toBeLessThan(compacted?.before.tokens ?? 0);
    expect(outcome.messages).toEqual([...history, said('Summary')]);
    expect(outcome).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 3,
      modelCalls: 4,
      overflowRecoveries: 1,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      failureCodes: { contextOverflow: 1 },
    });
    expectCallBound([model], 3, 3);
  });
});

describe('R6 overflow twice, and the per-turn allowance', () => {
  it('R6 overflow twice in one turn: one messageEnd(error), turnEnd(error), post-turn policies ran once, agentEnd', async () => {
    const clock = new SimulatedClock();
    const { flags, transform } = droppingTransform();
    const postTurn: PostTurnContext[] = [];
    const model = scriptedModel(
      [
        { text: FAILED_TEXT, error: { kind: 'contextOverflow' } },
        { text: 'Still too long', error: { kind: 'contextOverflow', message: 'prompt is too long' } },
      ],
      { clock },
    );
    const agent = createAgent({
      model,
      clock,
      retry: { jitter: false },
      context: { maxTokens: MAX_TOKENS, transform },
      policies: { postTurn: [(ctx) => (postTurn.push(ctx), { verdict: 'continue' })] },
    });
    const { result: outcome, events } = await finished(agent.prompt(['first', 'second']));

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'contextCompacted',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(flags).toEqual([false, true]);
    const failed: AssistantMessage = {
      role: 'assistant',
      content: [{ type: 'text', text: 'Still too long' }],
      stopReason: 'error',
      model: 'scripted',
      errorMessage: 'prompt is too long',
    };
    expect(ofType(events, 'messageEnd').map((e) => e.message)).toEqual([failed]);
    expect(bodies(events, 'turnEnd')).toEqual([
      { type: 'turnEnd', turnIndex: 0, reason: 'error', assistant: failed, toolResults: [] },
    ]);
    expect(JSON.stringify(events)).not.toContain(FAILED_TEXT);
    expect(postTurn).toHaveLength(1);
    expect(postTurn[0]).toMatchObject({
      turnIndex: 0,
      assistant: failed,
      toolResults: [],
      messages: [user('first'), user('second'), failed],
    });
    expect(outcome).toMatchObject({
      status: 'failed',
      endReason: 'fatalError',
      error: { code: 'contextOverflow', message: 'prompt is too long' },
    });
    expect(outcome.messages).toEqual([user('first'), user('second'), failed]);
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 1,
      turnsFailed: 1,
      modelCalls: 2,
      overflowRecoveries: 1,
      failureCodes: { contextOverflow: 2 },
    });
    expectCallBound([model], 1, 3);
  });

  it('R6 overflow in turn 2 after a normal turn 1 recovers: the allowance is per turn', async () => {
    const clock = new SimulatedClock();
    const { flags, transform } = droppingTransform();
    const model = scriptedModel(
      [
        { error: { kind: 'contextOverflow' } },
        { toolCalls: [{ id: 's1', name: 'search', arguments: { q: 'notes' } }] },
        { error: { kind: 'contextOverflow' } },
        { text: 'All done' },
      ],
      { clock },
    );
    const agent = createAgent({
      model,
      clock,
      tools: [searchTool()],
      retry: { jitter: false },
      context: { maxTokens: MAX_TOKENS, transform },
    });
    const { result: outcome, events } = await finished(agent.prompt(['first', 'second']));

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
      'contextCompacted',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'toolExecutionStart',
      'toolExecutionEnd',
      'turnEnd',
      'turnStart',
      'beforeModelCall',
      'contextCompacted',
      'beforeModelCall',
      'messageStart',
      'messageUpdate+',
      'messageEnd',
      'turnEnd',
      'agentEnd',
    ]);
    expect(flags).toEqual([false, true, false, true]);
    const call = called([{ id: 's1', name: 'search', arguments: { q: 'notes' } }]);
    const afterTool = [user('first'), user('second'), call, result('s1', 'search', 'found notes')];
    expect(model.requests.map((r) => r.messages)).toEqual([
      afterTool.slice(0, 2),
      afterTool.slice(1, 2),
      afterTool,
      afterTool.slice(1),
    ]);
    expect(bodies(events, 'contextCompacted').map((e) => [e.turnIndex, e.before.messages, e.after.messages])).toEqual([
      [0, 2, 1],
      [1, 4, 3],
    ]);
    expect(outcome.messages).toEqual([...afterTool, said('All done')]);
    expect(outcome).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, {
      turns: 2,
      modelCalls: 4,
      overflowRecoveries: 2,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      failureCodes: { contextOverflow: 2 },
    });
    expectCallBound([model], 2, 3);
  });
});

describe('R7 cancel during overflow recovery', () => {
  it('R7 cancel during overflow recovery: one turnStart, one messageStart, turnEnd(aborted), agentEnd', async () => {
    const clock = new SimulatedClock();
    const gate = deferred();
    const flags: boolean[] = [];
    const model = scriptedModel(
      [{ text: FAILED_TEXT, error: { kind: 'contextOverflow' } }, { text: 'never streamed' }],
      { clock },
    );
    const transform = async (messages: Message[], info: { overflow: boolean }) => {
      flags.push(info.overflow);
      if (info.overflow) await gate.promise;
      return info.overflow ? messages.slice(1) : messages;
    };
    const agent = createAgent({
      model,
      clock,
      retry: { jitter: false },
      context: { maxTokens: MAX_TOKENS, transform },
    });
    const run = agent.prompt(['first', 'second']);
    await settle();
    expect(flags).toEqual([false, true]);

    agent.abort();
    const { result: outcome, events } = await finished(run);

    expect(lifecycle(events)).toEqual([
      'agentStart',
      'turnStart',
      'beforeModelCall',
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
    expect(outcome.messages).toEqual([user('first'), user('second'), aborted]);
    expect(model.calls).toBe(1);
    expectInvariants(events, outcome.messages);
    expectCounters(outcome.counters, { turns: 1, modelCalls: 1, failureCodes: { contextOverflow: 1 } });
    expectCallBound([model], 1, 3);
    gate.resolve();
  });
});
