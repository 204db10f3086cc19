import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createAgent,
  defineTool,
  jsonSchemaParameters,
  TOOL_SOURCE,
  type AnyTool,
  type JsonSchemaTool,
  type ToolSource,
} from 'agentchart';
import { createToolRegistry } from 'agentchart/model-kit';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, ofType } from '../support/harness.js';

const USAGE = { input: 10, output: 5 };

/** A hand-made tool source: tools with JSON Schema parameters whose list the test changes. */
function source(): ToolSource & { set(names: string[]): void } {
  const made = new Map<string, AnyTool>();
  const tool = (name: string): JsonSchemaTool =>
    Object.freeze({
      name,
      description: `tool ${name}`,
      parameters: jsonSchemaParameters(
        { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
        (args) => (Number.isInteger(args.n) ? [] : [{ message: 'must be integer', path: ['n'] }]),
      ),
      requiresApproval: false,
      progress: false,
      replay: 'never' as const,
      execute: (args: Record<string, unknown>) => `${name}(${String(args.n)})`,
      [TOOL_SOURCE]: live,
    });
  const live = {
    version: 0,
    tools: [] as readonly AnyTool[],
    set(names: string[]) {
      this.tools = names.map((name) => made.get(name) ?? (made.set(name, tool(name)).get(name) as AnyTool));
      this.version++;
    },
  };
  return live;
}

describe('tool sources: an agent follows a changing tool list between turns', () => {
  it('applies a change at the next turn start with toolsChanged; a static tool keeps its name against the source', async () => {
    const tools = source();
    tools.set(['alpha']);
    const local = defineTool({
      name: 'local',
      description: 'static',
      parameters: z.object({}),
      execute: () => 'static',
    });
    const replies = [
      { toolCalls: [{ id: 'a', name: 'alpha', arguments: { n: 1 } }], usage: USAGE },
      {
        toolCalls: [
          { id: 'g', name: 'gamma', arguments: { n: 'two' } },
          { id: 'l', name: 'local', arguments: {} },
        ],
        usage: USAGE,
      },
      { text: 'Done.', usage: USAGE },
    ];
    const model = scriptedModel((_request, callIndex) => {
      // Inside turn 0: the change waits for the next turn. The source's "local" loses to the static one.
      if (callIndex === 0) tools.set(['gamma', 'alpha', 'local']);
      return replies[callIndex] as (typeof replies)[number];
    });
    const agent = createAgent({ model, tools: [local, ...tools.tools] });
    const { result, events } = await finished(agent.prompt('go'));

    expect(model.requests[0]?.tools?.map((tool) => tool.name)).toEqual(['local', 'alpha']);
    expect(model.requests[1]?.tools?.map((tool) => tool.name)).toEqual(['local', 'gamma', 'alpha']);
    expect(ofType(events, 'toolsChanged')).toMatchObject([{ added: ['gamma'], removed: [], updated: [] }]);
    const results = ofType(events, 'turnEnd').flatMap((event) =>
      event.toolResults.map((r) => [r.toolCallId, r.content]),
    );
    expect(results).toEqual([
      ['a', 'alpha(1)'],
      ['g', 'Invalid arguments for tool "gamma": n: must be integer'],
      ['l', 'static'],
    ]);
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, {
      turns: 3,
      modelCalls: 3,
      toolCallsRequested: 3,
      toolCallsExecuted: 2,
      toolCallsInvalid: 1,
      tokensIn: 30,
      tokensOut: 15,
    });
  });

  it('JSON-Schema-backed parameters reach the model unchanged and an asynchronous validator is refused per call', async () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { q: { type: 'string' } },
    };
    const parameters = jsonSchemaParameters(schema);
    expect(
      createToolRegistry([
        {
          ...defineTool({ name: 'x', description: '', parameters: z.object({}), execute: () => '' }),
          parameters,
        } as AnyTool,
      ]).specs()[0]?.parameters,
    ).toEqual(schema);
    const asyncParams = {
      '~standard': { ...parameters['~standard'], validate: async (value: unknown) => ({ value }) },
    };
    const tool = {
      name: 'slow',
      description: '',
      parameters: asyncParams,
      requiresApproval: false,
      progress: false,
      replay: 'never' as const,
      execute: () => 'ran',
    };
    const model = scriptedModel([
      { toolCalls: [{ id: 's', name: 'slow', arguments: {} }], usage: USAGE },
      { text: 'ok', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [tool as AnyTool] });
    const { events } = await finished(agent.prompt('go'));
    expect(ofType(events, 'toolExecutionEnd')[0]?.result).toBe(
      'Invalid arguments for tool "slow": the schema validates asynchronously, which tools do not support',
    );
    expectInvariants(events, agent.messages);
  });
});
