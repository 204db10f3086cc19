import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from 'agentchart';
import { CANCEL_REASON, mcpTools, type McpToolset } from 'agentchart/mcp';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, ofType } from '../support/harness.js';
import {
  atFirstUpdate,
  closeQuickly,
  eventually,
  EVERYTHING,
  missingServers,
  observedStdio,
  ServerLog,
  tempDir,
} from './support/servers.js';

const USAGE = { input: 10, output: 5 };
const LONG = 'ev__trigger-long-running-operation';
const skip = missingServers();
if (skip) console.warn(`skipping the MCP timeouts and steering suite: ${skip}`);

describe.skipIf(skip !== null)('MCP call timeouts reset by progress, and cancellation by steering', () => {
  let everything: McpToolset;
  let log: ServerLog;

  beforeAll(async () => {
    log = new ServerLog(tempDir('timeouts'), 'everything');
    everything = await mcpTools(observedStdio(EVERYTHING, ['stdio'], log), {
      name: 'ev',
      timeouts: { callMs: 400, totalMs: 900 },
    });
  });
  afterAll(async () => {
    await closeQuickly(everything, log);
  });

  it('progress resets the timeout (a 0.6 s call with progress passes a 400 ms timeout); silence times out; the overall cap holds', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'steady', name: LONG, arguments: { duration: 0.6, steps: 12 } },
          { id: 'silent', name: LONG, arguments: { duration: 0.8, steps: 1 } },
          { id: 'endless', name: LONG, arguments: { duration: 2, steps: 40 } },
        ],
        usage: USAGE,
      },
      { text: 'Two timed out.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [...everything.tools] });
    const { result, events } = await finished(agent.prompt('work'));
    const ends = new Map(ofType(events, 'toolExecutionEnd').map((event) => [event.toolCallId, event]));
    expect(ends.get('steady')).toMatchObject({
      isError: false,
      result: 'Long running operation completed. Duration: 0.6 seconds, Steps: 12.',
    });
    expect(ends.get('silent')).toMatchObject({
      isError: true,
      result: 'timed out after 400 ms without a result or a progress notification',
    });
    expect(ends.get('endless')).toMatchObject({
      isError: true,
      result: 'timed out: the call passed its overall limit of 900 ms',
    });
    expect(ofType(events, 'toolExecutionUpdate').filter((event) => event.toolCallId === 'steady')).toHaveLength(12);
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 3,
      toolCallsExecuted: 3,
      toolCallsFailed: 2,
      tokensIn: 20,
      tokensOut: 10,
    });
  });

  it('steering cancels a running call: notifications/cancelled reaches the server and the call gets the steering result', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'busy', name: LONG, arguments: { duration: 5, steps: 50 } }], usage: USAGE },
      { text: 'Changed course.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [...everything.tools], steeringGraceMs: 0 });
    const run = agent.prompt('work');
    atFirstUpdate(run, () => void agent.steer('stop that, do something else'));
    const { result, events } = await finished(run);

    expect(ofType(events, 'toolExecutionEnd')[0]).toMatchObject({
      toolCallId: 'busy',
      isError: true,
      result: 'cancelled: steering (the user sent a new message; this call was interrupted)',
    });
    expect(ofType(events, 'turnEnd')[0]?.reason).toBe('steeringInterrupt');
    const call = log
      .received('tools/call')
      .find((message) => (message.params?.arguments as { steps?: number } | undefined)?.steps === 50);
    const cancelled = await eventually(
      () => log.received('notifications/cancelled').find((message) => message.params?.requestId === call?.id),
      'notifications/cancelled on the server side',
    );
    expect(cancelled.params).toEqual({ requestId: call?.id, reason: CANCEL_REASON });
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      toolCallsFailed: 1,
      steeringDelivered: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });
});
