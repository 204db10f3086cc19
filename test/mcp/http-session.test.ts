import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from 'agentchart';
import { mcpTools, type McpToolset } from 'agentchart/mcp';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, ofType } from '../support/harness.js';
import { missingServers, startEverythingHttp, type HttpServer } from './support/servers.js';

const USAGE = { input: 10, output: 5 };
const skip = missingServers();
if (skip) console.warn(`skipping the MCP Streamable HTTP suite: ${skip}`);

describe.skipIf(skip !== null)('MCP over Streamable HTTP: server-everything on 127.0.0.1', () => {
  let server: HttpServer;
  let web: McpToolset;
  let safe: McpToolset;

  beforeAll(async () => {
    server = await startEverythingHttp();
    [web, safe] = await Promise.all([
      mcpTools({ url: server.url }, { name: 'web' }),
      mcpTools({ url: new URL(server.url), headers: { 'x-test': 'yes' } }, { name: 'websafe', replay: 'safe' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([web?.close(), safe?.close()]);
    await server?.stop();
  });

  it('a session calls tools over HTTP, with progress as updates', async () => {
    expect(new URL(server.url).hostname).toBe('127.0.0.1');
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'e', name: 'web__echo', arguments: { message: 'over http' } },
          { id: 'p', name: 'web__trigger-long-running-operation', arguments: { duration: 0.06, steps: 3 } },
        ],
        usage: USAGE,
      },
      { text: 'Done.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [...web.tools] });
    const { result, events } = await finished(agent.prompt('go'));
    expect(ofType(events, 'toolExecutionEnd').map((event) => [event.toolCallId, event.result])).toEqual([
      ['e', 'Echo: over http'],
      ['p', 'Long running operation completed. Duration: 0.06 seconds, Steps: 3.'],
    ]);
    expect(ofType(events, 'toolExecutionUpdate').map((event) => event.partial)).toEqual(
      [1, 2, 3].map((progress) => ({ progress, total: 3 })),
    );
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      tokensIn: 20,
      tokensOut: 10,
    });
  });

  it('after a server restart the expired session is re-initialized: the call that met it fails (replay never), the next succeeds', async () => {
    const port = server.port;
    await server.stop();
    server = await startEverythingHttp(port);
    const model = scriptedModel([
      { toolCalls: [{ id: 'stale', name: 'web__echo', arguments: { message: 'one' } }], usage: USAGE },
      { toolCalls: [{ id: 'fresh', name: 'web__echo', arguments: { message: 'two' } }], usage: USAGE },
      { text: 'Back.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [...web.tools] });
    const { result, events } = await finished(agent.prompt('go'));
    const [stale, fresh] = ofType(events, 'toolExecutionEnd');
    expect(stale).toMatchObject({ toolCallId: 'stale', isError: true });
    expect(stale?.result).toBe(
      `interrupted: the connection to MCP server "web" was lost during the call (the server no longer knows the session (HTTP 400)); it was not re-run (replay: 'never')`,
    );
    expect(fresh).toMatchObject({ toolCallId: 'fresh', isError: false, result: 'Echo: two' });
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, {
      turns: 3,
      modelCalls: 3,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      toolCallsFailed: 1,
      tokensIn: 30,
      tokensOut: 15,
    });
  });

  it('replay safe: the call that met the expired session runs again on the new session and succeeds', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'again', name: 'websafe__get-sum', arguments: { a: 20, b: 22 } }], usage: USAGE },
      { text: 'Done.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [...safe.tools] });
    const { result, events } = await finished(agent.prompt('go'));
    expect(ofType(events, 'toolExecutionEnd')[0]).toMatchObject({
      toolCallId: 'again',
      isError: false,
      result: 'The sum of 20 and 22 is 42.',
    });
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
