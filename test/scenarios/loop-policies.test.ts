import { describe, expect, test } from 'vitest';
import { createAgent } from 'agentchart';
import { zeroCounters } from 'agentchart/model-kit';
import type { Agent, Counters, Message } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, lifecycle, ofType } from '../support/harness.js';
import { calledRead, readResult, readTool, said, TEXT_TURN, TOOL_TURN, turnEnds, user } from './session-fixtures.js';

// Scenarios P1 (pre-turn Stop / Inject) and P4 (post-loop once per outer iteration, Inject).

describe('loop policies', () => {
  test('P1 pre-turn Stop ends the session with agentEnd and no turnStart; the prompt is kept in history', async () => {
    const model = scriptedModel([]);
    const agent = createAgent({
      model,
      retry: { jitter: false },
      policies: { preTurn: [() => ({ verdict: 'stop', reason: 'budget exhausted' })] },
    });

    const { result, events } = await finished(agent.prompt('hello'));

    expect(lifecycle(events)).toEqual(['agentStart', 'agentEnd']);
    expectInvariants(events, result.messages);
    expect(ofType(events, 'agentEnd')).toMatchObject([
      { status: 'completed', endReason: 'policyStop', messages: [user('hello')] },
    ]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'policyStop' });
    expect(result.error).toBeUndefined();
    expect(result.messages).toEqual([user('hello')]);
    expect(model.calls).toBe(0);
    expectCounters(result.counters, {});
  });

  test('P1 pre-turn Stop before a later turn ends the session right after the previous turnEnd', async () => {
    const seen: number[] = [];
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_1', name: 'read', arguments: { path: 'a.txt' } }], usage: { input: 7, output: 1 } },
    ]);
    const agent = createAgent({
      model,
      tools: [readTool()],
      retry: { jitter: false },
      policies: {
        preTurn: [
          ({ turnIndex }) => {
            seen.push(turnIndex);
            return turnIndex === 1 ? { verdict: 'stop', reason: 'one turn is enough' } : { verdict: 'continue' };
          },
        ],
      },
    });

    const { result, events } = await finished(agent.prompt('read a.txt'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TOOL_TURN, 'agentEnd']);
    expectInvariants(events, result.messages);
    expect(seen).toEqual([0, 1]);
    expect(turnEnds(events)).toEqual([[0, 'toolsExecuted']]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'policyStop' });
    expect(result.messages).toEqual([
      user('read a.txt'),
      calledRead('call_1', 'a.txt', { input: 7, output: 1 }),
      readResult('call_1', 'a.txt'),
    ]);
    expect(model.calls).toBe(1);
    expectCounters(result.counters, {
      turns: 1,
      modelCalls: 1,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      tokensIn: 7,
      tokensOut: 1,
    });
  });

  test("P1 pre-turn Inject puts the message in this turn's model call", async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_1', name: 'read', arguments: { path: 'a.txt' } }] },
      { text: 'Done, with pnpm.' },
    ]);
    const agent = createAgent({
      model,
      tools: [readTool()],
      retry: { jitter: false },
      policies: {
        preTurn: [
          ({ turnIndex }) => ({ verdict: 'inject', messages: [`note for turn ${turnIndex}: this repo uses pnpm`] }),
        ],
      },
    });

    const { result, events } = await finished(agent.prompt('install deps'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TOOL_TURN, ...TEXT_TURN, 'agentEnd']);
    expectInvariants(events, result.messages);
    const prompt = user('install deps');
    const note0 = user('note for turn 0: this repo uses pnpm');
    const note1 = user('note for turn 1: this repo uses pnpm');
    const call = calledRead('call_1', 'a.txt');
    const readA = readResult('call_1', 'a.txt');
    expect(model.requests.map((r) => r.messages)).toEqual([
      [prompt, note0],
      [prompt, note0, call, readA, note1],
    ]);
    expect(ofType(events, 'beforeModelCall').map((e) => e.messages)).toEqual(model.requests.map((r) => r.messages));
    expect(result.messages).toEqual([prompt, note0, call, readA, note1, said('Done, with pnpm.')]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectCounters(result.counters, { turns: 2, modelCalls: 2, toolCallsRequested: 1, toolCallsExecuted: 1 });
  });

  test('P4 post-loop runs once per outer iteration and sees real usage', async () => {
    const calls: Array<{ turnIndex: number; counters: Counters; messages: Message[]; newMessages: Message[] }> = [];
    let agent!: Agent;
    const model = scriptedModel(
      (_request, callIndex) => {
        // A follow-up makes a second outer iteration; the first one has two turns (tool, text).
        if (callIndex === 0) void agent.followUp('now b.txt');
        return [
          {
            toolCalls: [{ id: 'call_1', name: 'read', arguments: { path: 'a.txt' } }],
            usage: { input: 10, output: 2, cacheWrite: 2 },
          },
          { text: 'a.txt read.', usage: { input: 20, output: 3, cacheRead: 4 } },
          { text: 'b.txt is empty.', usage: { input: 30, output: 4 } },
        ][callIndex];
      },
      { pricing: { input: 1_000_000, output: 2_000_000 } },
    );
    agent = createAgent({
      model,
      tools: [readTool()],
      retry: { jitter: false },
      policies: {
        postLoop: [
          (ctx) => {
            calls.push({
              turnIndex: ctx.turnIndex,
              counters: structuredClone(ctx.counters),
              messages: [...ctx.messages],
              newMessages: [...ctx.newMessages],
            });
            return { verdict: 'continue' };
          },
        ],
      },
    });

    const { result, events } = await finished(agent.prompt('read a.txt'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TOOL_TURN, ...TEXT_TURN, ...TEXT_TURN, 'agentEnd']);
    expectInvariants(events, result.messages);
    const firstLoop = [
      user('read a.txt'),
      calledRead('call_1', 'a.txt', { input: 10, output: 2, cacheWrite: 2 }),
      readResult('call_1', 'a.txt'),
      said('a.txt read.', { input: 20, output: 3, cacheRead: 4 }),
    ];
    // Cost at $1 per input/cache token and $2 per output token.
    expect(calls).toEqual([
      {
        turnIndex: 2,
        counters: {
          ...zeroCounters(),
          turns: 2,
          modelCalls: 2,
          toolCallsRequested: 1,
          toolCallsExecuted: 1,
          tokensIn: 30,
          tokensOut: 5,
          tokensCacheRead: 4,
          tokensCacheWrite: 2,
          costUsd: 46,
        },
        messages: firstLoop,
        newMessages: [],
      },
      {
        turnIndex: 3,
        counters: {
          ...zeroCounters(),
          turns: 3,
          modelCalls: 3,
          toolCallsRequested: 1,
          toolCallsExecuted: 1,
          followUpsDelivered: 1,
          tokensIn: 60,
          tokensOut: 9,
          tokensCacheRead: 4,
          tokensCacheWrite: 2,
          costUsd: 84,
        },
        messages: [...firstLoop, user('now b.txt'), said('b.txt is empty.', { input: 30, output: 4 })],
        newMessages: [],
      },
    ]);
    expect(turnEnds(events)).toEqual([
      [0, 'toolsExecuted'],
      [1, 'complete'],
      [2, 'complete'],
    ]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectCounters(result.counters, {
      turns: 3,
      modelCalls: 3,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      followUpsDelivered: 1,
      tokensIn: 60,
      tokensOut: 9,
      tokensCacheRead: 4,
      tokensCacheWrite: 2,
      costUsd: 84,
    });
  });

  test('P4 post-loop Inject starts another outer iteration whose model call sees the injected message', async () => {
    const seen: Array<{ turnIndex: number; messages: Message[] }> = [];
    const model = scriptedModel([{ text: 'Implemented.' }, { text: 'Test added.' }]);
    const agent = createAgent({
      model,
      retry: { jitter: false },
      policies: {
        postLoop: [
          ({ turnIndex, messages }) => {
            seen.push({ turnIndex, messages: [...messages] });
            return seen.length === 1 ? { verdict: 'inject', messages: ['Also add a test.'] } : { verdict: 'continue' };
          },
        ],
      },
    });

    const { result, events } = await finished(agent.prompt('implement it'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TEXT_TURN, ...TEXT_TURN, 'agentEnd']);
    expectInvariants(events, result.messages);
    const history = [user('implement it'), said('Implemented.'), user('Also add a test.'), said('Test added.')];
    expect(seen).toEqual([
      { turnIndex: 1, messages: history.slice(0, 2) },
      { turnIndex: 2, messages: history },
    ]);
    expect(model.requests.map((r) => r.messages)).toEqual([history.slice(0, 1), history.slice(0, 3)]);
    expect(turnEnds(events)).toEqual([
      [0, 'complete'],
      [1, 'complete'],
    ]);
    expect(result.messages).toEqual(history);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectCounters(result.counters, { turns: 2, modelCalls: 2 });
  });

  test('P4 post-loop Stop ends the session completed with policyStop once the loop is over; a queued follow-up stays queued', async () => {
    const seen: number[] = [];
    let agent!: Agent;
    agent = createAgent({
      model: scriptedModel([{ text: 'Done.' }, { text: 'never asked' }]),
      retry: { jitter: false },
      policies: {
        postLoop: [
          ({ turnIndex }) => {
            seen.push(turnIndex);
            // A follow-up arriving now would start another iteration; the stop ends the session first.
            agent.followUp('and then?');
            return { verdict: 'stop', reason: 'one answer is enough' };
          },
        ],
      },
    });

    const { result, events } = await finished(agent.prompt('hello'));

    expect(lifecycle(events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expectInvariants(events, result.messages);
    expect(seen).toEqual([1]);
    expect(ofType(events, 'agentEnd')).toMatchObject([{ status: 'completed', endReason: 'policyStop' }]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'policyStop' });
    expect(result.error).toBeUndefined();
    expectCounters(result.counters, { turns: 1, modelCalls: 1 });
    expect(agent.snapshot().followUpQueue).toEqual([user('and then?')]);
  });
});
