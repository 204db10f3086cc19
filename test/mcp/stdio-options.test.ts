import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from 'agentchart';
import { mcpTools, type McpElicitationRequest, type McpToolset } from 'agentchart/mcp';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, ofType } from '../support/harness.js';
import {
  atFirstUpdate,
  closeQuickly,
  EVERYTHING,
  kill,
  missingServers,
  observedStdio,
  ServerLog,
  tempDir,
} from './support/servers.js';

const USAGE = { input: 10, output: 5 };
const skip = missingServers();
if (skip) console.warn(`skipping the MCP options suite: ${skip}`);

describe.skipIf(skip !== null)('MCP options: overrides, replay safe, elicitation through a handler', () => {
  let everything: McpToolset;
  let log: ServerLog;
  const elicited: McpElicitationRequest[] = [];

  beforeAll(async () => {
    log = new ServerLog(tempDir('options'), 'everything');
    everything = await mcpTools(observedStdio(EVERYTHING, ['stdio'], log), {
      name: 'ev',
      requiresApproval: true,
      replay: 'safe',
      tools: { echo: { requiresApproval: false }, 'get-sum': { replay: 'never' } },
      elicitation: (request) => {
        elicited.push(request);
        return { approved: true, arguments: { name: 'Ada Lovelace', check: true } };
      },
    });
  });
  afterAll(async () => {
    await closeQuickly(everything, log);
  });

  it('server-wide options win over annotations and per-tool options win over both', () => {
    const byName = new Map(everything.tools.map((tool) => [tool.name, tool]));
    // get-sum is read-only by its annotations; the server-wide option asks anyway.
    expect(byName.get('ev__get-sum')).toMatchObject({ requiresApproval: true, replay: 'never' });
    expect(byName.get('ev__echo')).toMatchObject({ requiresApproval: false, replay: 'safe' });
    expect(byName.get('ev__trigger-long-running-operation')).toMatchObject({ requiresApproval: true, replay: 'safe' });
  });

  it('an elicitation goes to the handler as an approval-shaped request; its arguments are the answer', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'ask', name: 'ev__trigger-elicitation-request', arguments: {} }], usage: USAGE },
      { text: 'Thanks.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [...everything.tools], approvalMode: 'bypass' });
    const { result, events } = await finished(agent.prompt('ask me'));

    expect(elicited).toHaveLength(1);
    expect(elicited[0]).toMatchObject({
      server: 'ev',
      message: 'Please provide inputs for the following fields:',
      toolCallId: 'ask',
      toolName: 'ev__trigger-elicitation-request',
    });
    expect(elicited[0]?.requestedSchema).toMatchObject({ type: 'object', required: ['name'] });
    const end = ofType(events, 'toolExecutionEnd')[0];
    expect(end?.result).toContain('✅ User provided the requested information!');
    expect(end?.result).toContain('- Name: Ada Lovelace');
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });

  it('replay safe: a call in flight when the stdio server dies is run once more on the new server and succeeds', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'again', name: 'ev__trigger-long-running-operation', arguments: { duration: 0.5, steps: 5 } },
        ],
        usage: USAGE,
      },
      { text: 'Done.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [...everything.tools], approvalMode: 'bypass' });
    const pids = log.pids();
    const run = agent.prompt('work');
    atFirstUpdate(run, () => void kill(pids.at(-1) as number));
    const { result, events } = await finished(run);

    expect(ofType(events, 'toolExecutionEnd')[0]).toMatchObject({
      toolCallId: 'again',
      isError: false,
      result: 'Long running operation completed. Duration: 0.5 seconds, Steps: 5.',
    });
    // The first run's progress, then the re-run's from the start: all attributed to the one call.
    const progress = ofType(events, 'toolExecutionUpdate').map(
      (event) => (event.partial as { progress: number }).progress,
    );
    expect(progress[0]).toBe(1);
    expect(progress.slice(-5)).toEqual([1, 2, 3, 4, 5]);
    expect(log.pids()).toHaveLength(pids.length + 1);
    expect(
      log.received('tools/call').filter((message) => message.params?.name === 'trigger-long-running-operation'),
    ).toHaveLength(2);
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });
});
