import { createAgent, defineTool, type AgentEvent, type Usage } from 'agentchart';
import { costOf, zeroCounters } from 'agentchart/model-kit';
import { checkInvariants } from 'agentchart/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { ALL_HARNESSES } from './harnesses.js';
import { httpError, ProtocolServer, sse } from './protocol-server.js';
import { sseText, type ScriptedReply } from './wire.js';

const weather = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => (city === 'Paris' ? 'Paris: 18°C, sunny' : `${city}: 21°C, clear`),
});

const TOOL_TURN_USAGE: Usage = { input: 120, output: 30, cacheRead: 40, cacheWrite: 10 };
const FINAL_TURN_USAGE: Usage = { input: 200, output: 15 };

const TOOL_TURN: ScriptedReply = {
  text: ['Checking ', 'both.'],
  toolCalls: [
    { id: 'call_paris', name: 'get_weather', fragments: ['{"city":', '"Paris"}'] },
    { id: 'call_rome', name: 'get_weather', fragments: ['{"ci', 'ty":"Rome"}'] },
  ],
  finish: 'toolUse',
  usage: TOOL_TURN_USAGE,
};
const FINAL_TURN: ScriptedReply = { text: ['Paris 18°C, ', 'Rome 21°C.'], finish: 'stop', usage: FINAL_TURN_USAGE };

/**
 * A whole agent session through each adapter and its protocol server: a real 429 with retry-after
 * (waited out on the simulated clock), a turn with two parallel tool calls, then the final text.
 */
describe.each(ALL_HARNESSES)('a full session through $name', (harness) => {
  let server: ProtocolServer;
  beforeAll(async () => {
    server = await ProtocolServer.start();
  });
  afterAll(async () => {
    await server.close();
  });
  afterEach(() => {
    server.reset();
  });

  it('retries after the 429, runs the tools, ends with the final text; invariants hold', async () => {
    const { wire } = harness;
    server.respondWith(
      httpError(429, wire.errorBody('rateLimit'), { 'retry-after': '2' }),
      sse(sseText(wire.events(TOOL_TURN))),
      sse(sseText(wire.events(FINAL_TURN))),
    );
    const model = harness.createModel(server);
    const clock = new SimulatedClock();
    const agent = createAgent({
      model,
      clock,
      systemPrompt: 'You are terse.',
      tools: [weather],
      retry: { jitter: false },
    });
    const run = agent.prompt('Weather in Paris and Rome?');
    const events: AgentEvent[] = [];
    run.events.subscribe((event) => {
      events.push(event);
      // The backoff waits on the simulated clock: move it once the retry is scheduled.
      if (event.type === 'retry') setImmediate(() => clock.increment(event.delayMs));
    });
    const result = await run.result;

    expect(checkInvariants(events, result.messages).violations).toEqual([]);
    expect(result.status).toBe('completed');
    expect(result.endReason).toBe('naturalEnd');
    expect(
      events
        .filter((event) => event.type === 'retry')
        .map((event) => event.type === 'retry' && [event.delayMs, event.error.kind]),
    ).toEqual([[2000, 'rateLimit']]);

    const cacheWrite = wire.reportsCacheWrite ? (TOOL_TURN_USAGE.cacheWrite ?? 0) : 0;
    const reported = (usage: Usage): Usage => ({
      ...usage,
      ...(wire.reportsCacheWrite ? {} : { cacheWrite: undefined }),
    });
    expect(result.counters).toEqual({
      ...zeroCounters(),
      turns: 2,
      modelCalls: 3,
      retries: 1,
      backoffMs: 2000,
      failureCodes: { rateLimit: 1 },
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      tokensIn: 320,
      tokensOut: 45,
      tokensCacheRead: 40,
      tokensCacheWrite: cacheWrite,
      costUsd: expect.closeTo(
        costOf(reported(TOOL_TURN_USAGE), wire.listPrice) + costOf(FINAL_TURN_USAGE, wire.listPrice),
        12,
      ),
    });

    expect(result.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'toolResult',
      'toolResult',
      'assistant',
    ]);
    expect(result.messages.slice(1)).toMatchObject([
      {
        role: 'assistant',
        stopReason: 'toolUse',
        content: [
          { type: 'text', text: 'Checking both.' },
          { type: 'toolCall', id: 'call_paris', name: 'get_weather', arguments: { city: 'Paris' } },
          { type: 'toolCall', id: 'call_rome', name: 'get_weather', arguments: { city: 'Rome' } },
        ],
      },
      { role: 'toolResult', toolCallId: 'call_paris', content: 'Paris: 18°C, sunny', isError: false },
      { role: 'toolResult', toolCallId: 'call_rome', content: 'Rome: 21°C, clear', isError: false },
      { role: 'assistant', stopReason: 'stop', content: [{ type: 'text', text: 'Paris 18°C, Rome 21°C.' }] },
    ]);

    // One request per model call: the failed one, its retry, and the turn that answers the tool results.
    expect(server.requests).toHaveLength(3);
    expect(JSON.stringify(server.requests[1]?.body)).toContain('Weather in Paris and Rome?');
    expect(JSON.stringify(server.requests[2]?.body)).toContain('Rome: 21°C, clear');
  });

  // Known runtime bug, reported to the lead: the first model call of a turn reads the history before
  // the turn's input is committed, so the prompt is missing from it (the retry has it). Drop `.fails`
  // once the runtime commits the input before calling the model.
  it("sends the turn's input in the turn's first model call", async () => {
    server.respondWith(sse(sseText(harness.wire.events(FINAL_TURN))));
    const agent = createAgent({ model: harness.createModel(server), systemPrompt: 'You are terse.' });
    await agent.prompt('Weather in Paris and Rome?').result;
    expect(server.requests).toHaveLength(1);
    expect(JSON.stringify(server.requests[0]?.body)).toContain('Weather in Paris and Rome?');
  });
});
