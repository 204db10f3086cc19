import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { type } from 'arktype';
import { createAgent, defineTool, type AgentEvent, type AnyTool } from 'agentchart';
import { zeroCounters } from 'agentchart/model-kit';
import { checkInvariants } from 'agentchart/testing';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_HARNESSES } from './harnesses.js';
import { ProtocolServer, sse } from './protocol-server.js';
import { sseText, type ScriptedReply } from './wire.js';

/** The same tool written with two non-zod Standard Schema libraries. */
const TOOLS: Array<{ library: string; tool: AnyTool }> = [
  {
    library: 'valibot',
    tool: defineTool({
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: toStandardJsonSchema(v.object({ city: v.string(), unit: v.optional(v.picklist(['C', 'F']), 'C') })),
      execute: ({ city, unit }) => `${city}: 18°${unit}`,
    }),
  },
  {
    library: 'arktype',
    tool: defineTool({
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: type({ city: 'string', unit: "'C' | 'F' = 'C'" }),
      execute: ({ city, unit }) => `${city}: 18°${unit}`,
    }),
  },
];

const TOOL_TURN: ScriptedReply = {
  toolCalls: [
    { id: 'call_ok', name: 'get_weather', fragments: ['{"city":"Paris"}'] },
    { id: 'call_bad', name: 'get_weather', fragments: ['{"city":42}'] },
  ],
  finish: 'toolUse',
  usage: { input: 50, output: 20 },
};
const FINAL_TURN: ScriptedReply = { text: ['Paris is 18°C.'], finish: 'stop', usage: { input: 80, output: 5 } };

/**
 * A whole session through each adapter with a non-zod tool: the provider sees the library's JSON
 * Schema, a valid call runs with its defaults applied, an invalid one gets the library's own message.
 */
describe.each(TOOLS)('a session with a $library tool', ({ library, tool }) => {
  let server: ProtocolServer;
  beforeAll(async () => {
    server = await ProtocolServer.start();
  });
  afterAll(async () => {
    await server.close();
  });

  it.each(ALL_HARNESSES)('through $name', async (harness) => {
    server.reset();
    server.respondWith(sse(sseText(harness.wire.events(TOOL_TURN))), sse(sseText(harness.wire.events(FINAL_TURN))));
    const agent = createAgent({ model: harness.createModel(server), tools: [tool] });
    const run = agent.prompt('Weather in Paris?');
    const events: AgentEvent[] = [];
    run.events.subscribe((event) => events.push(event));
    const result = await run.result;

    expect(checkInvariants(events, result.messages).violations).toEqual([]);
    expect([result.status, result.endReason]).toEqual(['completed', 'naturalEnd']);
    expect(result.counters).toMatchObject({
      ...zeroCounters(),
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 1,
      toolCallsInvalid: 1,
      tokensIn: 130,
      tokensOut: 25,
      costUsd: expect.any(Number),
    });
    const results = result.messages.filter((message) => message.role === 'toolResult');
    expect(results.map((message) => [message.toolCallId, message.isError])).toEqual([
      ['call_ok', false],
      ['call_bad', true],
    ]);
    expect(results[0]?.content).toBe('Paris: 18°C'); // the schema's default filled in `unit`
    expect(results[1]?.content).toBe(
      library === 'valibot'
        ? 'Invalid arguments for tool "get_weather": city: Invalid type: Expected string but received 42'
        : 'Invalid arguments for tool "get_weather": city: city must be a string (was a number)',
    );

    // The provider was told the tool's JSON Schema, as the library wrote it.
    const body = JSON.stringify(server.requests[0]?.body);
    expect(body).toContain('"city":{"type":"string"}');
    expect(body).toContain('"enum":["C","F"]');
    expect(server.requests).toHaveLength(2);
  });
});
