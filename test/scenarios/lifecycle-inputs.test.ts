import { describe, expect, test } from 'vitest';
import { AgentError, createAgent } from 'agentchart';
import type { AgentEvent, Message } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, lifecycle } from '../support/harness.js';
import {
  calledRead,
  readResult,
  readTool,
  said,
  TEXT_TURN,
  thrownBy,
  TOOL_TURN,
  turnEnds,
  user,
} from './session-fixtures.js';

// Scenario L6: what the first turn's policies see as input, and the typed errors of
// prompt()/continue() when there is a run in progress or nothing to continue.

describe('lifecycle: run inputs', () => {
  test('L6 first-turn pre-turn policies see exactly the prompt batch as newMessages', async () => {
    const seen: Array<{ turnIndex: number; newMessages: Message[]; messages: Message[] }> = [];
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_1', name: 'read', arguments: { path: 'a.txt' } }] },
      { text: 'a.txt is short.' },
    ]);
    const agent = createAgent({
      model,
      tools: [readTool()],
      retry: { jitter: false },
      policies: {
        preTurn: [
          (ctx) => {
            seen.push({ turnIndex: ctx.turnIndex, newMessages: [...ctx.newMessages], messages: [...ctx.messages] });
            return { verdict: 'continue' };
          },
        ],
      },
    });

    const { result, events } = await finished(
      agent.prompt(['look at a.txt', { role: 'user', content: 'and be brief' }]),
    );

    expect(lifecycle(events)).toEqual(['agentStart', ...TOOL_TURN, ...TEXT_TURN, 'agentEnd']);
    expectInvariants(events, result.messages);
    const batch = [user('look at a.txt'), user('and be brief')];
    const call = calledRead('call_1', 'a.txt');
    expect(seen).toEqual([
      { turnIndex: 0, newMessages: batch, messages: [] },
      { turnIndex: 1, newMessages: [], messages: [...batch, call, readResult('call_1', 'a.txt')] },
    ]);
    expect(model.requests[0]?.messages).toEqual(batch);
    expect(result.messages).toEqual([...batch, call, readResult('call_1', 'a.txt'), said('a.txt is short.')]);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expectCounters(result.counters, { turns: 2, modelCalls: 2, toolCallsRequested: 1, toolCallsExecuted: 1 });
  });

  test('L6 continue() gives pre-turn policies the drained queued batch as newMessages', async () => {
    const seen: Array<{ turnIndex: number; newMessages: Message[]; messages: Message[] }> = [];
    const model = scriptedModel([{ text: 'first answer' }, { text: 'second answer' }]);
    const agent = createAgent({
      model,
      retry: { jitter: false },
      policies: {
        preTurn: [
          (ctx) => {
            seen.push({ turnIndex: ctx.turnIndex, newMessages: [...ctx.newMessages], messages: [...ctx.messages] });
            return { verdict: 'continue' };
          },
        ],
      },
    });
    const first = await finished(agent.prompt('hello'));

    // Queued while no run is active: the receipts say so at once; continue() delivers them.
    expect(await agent.steer('use tabs')).toEqual({ status: 'stillQueued' });
    expect(await agent.followUp('and fix lint')).toEqual({ status: 'stillQueued' });
    expect(agent.snapshot()).toMatchObject({
      steeringQueue: [user('use tabs')],
      followUpQueue: [user('and fix lint')],
      running: false,
    });
    const second = await finished(agent.continue());

    expect(lifecycle(first.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expect(lifecycle(second.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expectInvariants([...first.events, ...second.events], agent.messages);
    const history = [user('hello'), said('first answer')];
    expect(seen).toEqual([
      { turnIndex: 0, newMessages: [user('hello')], messages: [] },
      { turnIndex: 1, newMessages: [user('use tabs'), user('and fix lint')], messages: history },
    ]);
    expect(model.requests[1]?.messages).toEqual([...history, user('use tabs'), user('and fix lint')]);
    expect(turnEnds(second.events)).toEqual([[1, 'complete']]);
    expect(agent.snapshot()).toMatchObject({ steeringQueue: [], followUpQueue: [], turnIndex: 2 });
    expect(second.result.messages).toEqual([...history, user('use tabs'), user('and fix lint'), said('second answer')]);
    expectCounters(first.result.counters, { turns: 1, modelCalls: 1 });
    expectCounters(second.result.counters, { turns: 2, modelCalls: 2, steeringDelivered: 1, followUpsDelivered: 1 });
  });

  test('L6 prompt() or continue() while running throws AlreadyRunning and leaves the run intact', async () => {
    const model = scriptedModel([{ text: 'working on it' }, { text: 'hello again' }]);
    const agent = createAgent({ model, retry: { jitter: false } });

    const run = agent.prompt('hello');
    expect(agent.running).toBe(true);
    const promptError = thrownBy(() => agent.prompt('are you there?'));
    const continueError = thrownBy(() => agent.continue());
    const { result, events } = await finished(run);

    for (const error of [promptError, continueError]) {
      expect(error).toBeInstanceOf(AgentError);
      expect(error).toMatchObject({
        name: 'AgentError',
        code: 'AlreadyRunning',
        message: expect.stringMatching(/already in progress/),
      });
    }
    expect(lifecycle(events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expectInvariants(events, result.messages);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(result.messages).toEqual([user('hello'), said('working on it')]);
    expect(model.calls).toBe(1);
    expectCounters(result.counters, { turns: 1, modelCalls: 1 });

    // Once the run has ended, prompt() works again.
    expect(agent.running).toBe(false);
    const again = await finished(agent.prompt('hello again?'));
    expect(lifecycle(again.events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expectInvariants([...events, ...again.events], agent.messages);
    expectCounters(again.result.counters, { turns: 2, modelCalls: 2 });
  });

  test('L6 continue() with no messages, or from an assistant tail with nothing queued, throws NothingToContinue', async () => {
    const model = scriptedModel([{ text: 'hi' }]);
    const agent = createAgent({ model, retry: { jitter: false } });
    const everything: AgentEvent[] = [];
    agent.events.subscribe((event) => everything.push(event));

    const empty = thrownBy(() => agent.continue());
    expect(empty).toBeInstanceOf(AgentError);
    expect(empty).toMatchObject({ code: 'NothingToContinue', message: expect.stringMatching(/no|none/i) });
    expect(agent.running).toBe(false);
    expect(everything).toEqual([]);

    const { result, events } = await finished(agent.prompt('hello'));
    const fromAssistant = thrownBy(() => agent.continue());
    expect(fromAssistant).toBeInstanceOf(AgentError);
    expect(fromAssistant).toMatchObject({ code: 'NothingToContinue', message: expect.stringMatching(/assistant/) });
    expect(agent.running).toBe(false);

    expect(everything).toEqual(events);
    expect(lifecycle(events)).toEqual(['agentStart', ...TEXT_TURN, 'agentEnd']);
    expectInvariants(events, agent.messages);
    expect(model.calls).toBe(1);
    expect(agent.messages).toEqual([user('hello'), said('hi')]);
    expectCounters(result.counters, { turns: 1, modelCalls: 1 });
    expect(agent.counters).toEqual(result.counters);
  });
});
