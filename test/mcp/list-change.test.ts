import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, defineTool } from 'agentchart';
import { mcpTools, type McpToolset } from 'agentchart/mcp';
import { scriptedModel } from 'agentchart/testing';
import { z } from 'zod';
import { expectCounters, expectInvariants, finished, lifecycle, ofType } from '../support/harness.js';
import { missingServers, SWITCHBOARD } from './support/servers.js';

const USAGE = { input: 10, output: 5 };
const skip = missingServers();
if (skip) console.warn(`skipping the MCP list-change suite: ${skip}`);

// The reference servers never change their tool list mid-session (server-everything's one
// tools/list_changed comes right after connect, with the same list): this server, built on the
// official SDK's McpServer, enables a tool and removes another when its "switch" tool is called.
describe.skipIf(skip !== null)('MCP tools/list_changed: applied between turns, announced by toolsChanged', () => {
  let switchboard: McpToolset;

  beforeAll(async () => {
    switchboard = await mcpTools({ command: process.execPath, args: [SWITCHBOARD], stderr: 'ignore' });
  });
  afterAll(async () => {
    await switchboard?.close();
  });

  it('a list change shows up at the next turn, never inside the turn that caused it; static tools stay', async () => {
    expect(switchboard.tools.map((tool) => tool.name)).toEqual(['switchboard__retired', 'switchboard__switch']);
    const local = defineTool({
      name: 'local',
      description: 'A static tool.',
      parameters: z.object({}),
      execute: () => 'local',
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 's', name: 'switchboard__switch', arguments: {} }], usage: USAGE },
      { toolCalls: [{ id: 'x', name: 'switchboard__extra', arguments: { word: 'hello' } }], usage: USAGE },
      { text: 'Switched.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [local, ...switchboard.tools] });
    const { result, events } = await finished(agent.prompt('switch'));

    const changes = ofType(events, 'toolsChanged');
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ added: ['switchboard__extra'], removed: ['switchboard__retired'], updated: [] });
    expect(changes[0]?.turnIndex).toBeUndefined();
    // Between turn 0's end and turn 1's start.
    const at = events.indexOf(changes[0] as (typeof events)[number]);
    expect(events[at - 1]?.type).toBe('turnEnd');
    expect(events[at + 1]).toMatchObject({ type: 'turnStart', turnIndex: 1 });
    expect(lifecycle(events).filter((type) => type === 'turnStart')).toHaveLength(3);
    const toolNames = (call: number) => model.requests[call]?.tools?.map((tool) => tool.name);
    expect(toolNames(0)).toEqual(['local', 'switchboard__retired', 'switchboard__switch']);
    // The server's own order (it lists tools in registration order).
    expect(toolNames(1)).toEqual(['local', 'switchboard__extra', 'switchboard__switch']);
    expect(ofType(events, 'toolExecutionEnd').map((event) => event.result)).toEqual(['switched', 'extra hello']);
    expect(switchboard.version).toBe(2);
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, {
      turns: 3,
      modelCalls: 3,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      tokensIn: 30,
      tokensOut: 15,
    });
  });
});
