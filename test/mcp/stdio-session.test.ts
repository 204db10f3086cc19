import { realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from 'agentchart';
import { mcpTools, CANCEL_REASON, type McpToolset } from 'agentchart/mcp';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, ofType } from '../support/harness.js';
import {
  atFirstUpdate,
  closeQuickly,
  eventually,
  EVERYTHING,
  FILESYSTEM,
  kill,
  missingServers,
  observedStdio,
  ServerLog,
  tempDir,
} from './support/servers.js';

const USAGE = { input: 10, output: 5 };
const skip = missingServers();
if (skip) console.warn(`skipping the MCP stdio suite: ${skip}`);

describe.skipIf(skip !== null)('MCP over stdio: server-everything and server-filesystem in agent sessions', () => {
  let dir: string;
  let everything: McpToolset;
  let everythingLog: ServerLog;
  let files: McpToolset;

  beforeAll(async () => {
    dir = tempDir('stdio');
    writeFileSync(join(dir, 'notes.txt'), 'the notes');
    everythingLog = new ServerLog(dir, 'everything');
    [everything, files] = await Promise.all([
      mcpTools(observedStdio(EVERYTHING, ['stdio'], everythingLog), { name: 'everything' }),
      // No name: the prefix is the server's reported name, reduced to [A-Za-z0-9_-].
      mcpTools({ command: process.execPath, args: [FILESYSTEM, dir], stderr: 'ignore' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([closeQuickly(everything, everythingLog), files?.close()]);
  });

  it('names tools <prefix>__<tool> and passes descriptions and input schemas through unchanged', () => {
    expect(files.name).toBe('secure-filesystem-server');
    const echo = everything.tools.find((tool) => tool.name === 'everything__echo');
    expect(echo?.description).toBe('Echoes back the input string');
    const model = scriptedModel([{ text: 'hi' }]);
    const agent = createAgent({ model, tools: [...everything.tools, ...files.tools] });
    return agent.prompt('list').result.then(() => {
      const spec = model.requests[0]?.tools?.find((tool) => tool.name === 'everything__echo');
      expect(spec?.parameters).toEqual({
        type: 'object',
        properties: { message: { type: 'string', description: 'Message to echo' } },
        required: ['message'],
        $schema: 'http://json-schema.org/draft-07/schema#',
      });
      expect(model.requests[0]?.tools?.map((tool) => tool.name)).toContain('secure-filesystem-server__read_text_file');
    });
  });

  it('a session uses tools from both servers; an isError result keeps the server text; no toolsChanged for an unchanged list', async () => {
    const outside = join(dir, '..', 'outside.txt');
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'e1', name: 'everything__echo', arguments: { message: 'hello' } },
          { id: 'f1', name: 'secure-filesystem-server__read_text_file', arguments: { path: join(dir, 'notes.txt') } },
          { id: 'f2', name: 'secure-filesystem-server__read_text_file', arguments: { path: outside } },
        ],
        usage: USAGE,
      },
      { text: 'Read them.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [...everything.tools, ...files.tools] });
    const { result, events } = await finished(agent.prompt('read'));

    expect(result.status).toBe('completed');
    const [echoed, read, denied] = ofType(events, 'turnEnd')[0]?.toolResults ?? [];
    expect(echoed).toMatchObject({ toolCallId: 'e1', content: 'Echo: hello', isError: false });
    expect(read).toMatchObject({ toolCallId: 'f1', content: 'the notes', isError: false });
    expect(denied?.isError).toBe(true);
    // The server's own text, unchanged.
    expect(denied?.content).toBe(
      `Access denied - path outside allowed directories: ${resolve(outside)} not in ${realpathSync(dir)}`,
    );
    expect(ofType(events, 'toolsChanged')).toEqual([]);
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 3,
      toolCallsExecuted: 3,
      toolCallsFailed: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });

  it('invalid arguments are checked against the server schema: an error result, never started', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'bad', name: 'everything__echo', arguments: { text: 'no message' } }], usage: USAGE },
      { text: 'Oops.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [...everything.tools] });
    const { result, events } = await finished(agent.prompt('echo'));
    expect(ofType(events, 'toolExecutionStart')).toEqual([]);
    expect(ofType(events, 'toolExecutionEnd')[0]).toMatchObject({
      toolCallId: 'bad',
      isError: true,
      result: `Invalid arguments for tool "everything__echo": (root): must have required property 'message'`,
    });
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 1,
      toolCallsInvalid: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });

  it('progress notifications arrive as toolExecutionUpdate { progress, total }, all of them, inside their calls', async () => {
    const ids = ['p1', 'p2', 'p3'];
    const model = scriptedModel([
      {
        toolCalls: ids.map((id) => ({
          id,
          name: 'everything__trigger-long-running-operation',
          arguments: { duration: 0.06, steps: 3 },
        })),
        usage: USAGE,
      },
      { text: 'Done.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [...everything.tools] });
    const { result, events } = await finished(agent.prompt('work'));
    for (const id of ids) {
      const updates = ofType(events, 'toolExecutionUpdate').filter((event) => event.toolCallId === id);
      // The last notification comes just before the response: it is never dropped.
      expect(updates.map((event) => event.partial)).toEqual([1, 2, 3].map((progress) => ({ progress, total: 3 })));
      expect(updates.every((event) => event.toolName === 'everything__trigger-long-running-operation')).toBe(true);
    }
    expect(ofType(events, 'toolExecutionEnd').map((event) => event.result)).toEqual(
      ids.map(() => 'Long running operation completed. Duration: 0.06 seconds, Steps: 3.'),
    );
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 3,
      toolCallsExecuted: 3,
      tokensIn: 20,
      tokensOut: 10,
    });
  });

  it('an abort mid-call sends notifications/cancelled (seen by the server) and gives the call an aborted result', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'long', name: 'everything__trigger-long-running-operation', arguments: { duration: 5, steps: 50 } },
        ],
        usage: USAGE,
      },
    ]);
    const agent = createAgent({ model, tools: [...everything.tools] });
    const run = agent.prompt('work');
    atFirstUpdate(run, () => agent.abort('user pressed stop'));
    const { result, events } = await finished(run);

    expect(result.status).toBe('aborted');
    expect(ofType(events, 'toolExecutionEnd')[0]).toMatchObject({
      toolCallId: 'long',
      isError: true,
      result: 'aborted: the run was cancelled before this tool call finished',
    });
    const call = everythingLog
      .received('tools/call')
      .find(
        (message) =>
          message.params?.name === 'trigger-long-running-operation' &&
          (message.params.arguments as { steps?: number }).steps === 50,
      );
    expect(call?.id).toBeTypeOf('number');
    const cancelled = await eventually(
      () => everythingLog.received('notifications/cancelled').find((message) => message.params?.requestId === call?.id),
      'notifications/cancelled on the server side',
    );
    expect(cancelled.params).toEqual({ requestId: call?.id, reason: CANCEL_REASON });
    expect(CANCEL_REASON).toBe('cancelled by the agent');
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, {
      turns: 1,
      modelCalls: 1,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      toolCallsFailed: 1,
      tokensIn: 10,
      tokensOut: 5,
    });
  });

  it('a killed stdio server: a call in flight with replay never is interrupted and not re-run; the server is restarted and the next turn works', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'cut', name: 'everything__trigger-long-running-operation', arguments: { duration: 5, steps: 50 } },
        ],
        usage: USAGE,
      },
      { toolCalls: [{ id: 'after', name: 'everything__echo', arguments: { message: 'still here' } }], usage: USAGE },
      { text: 'Recovered.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [...everything.tools] });
    const before = everythingLog.pids();
    const run = agent.prompt('work');
    atFirstUpdate(run, () => void kill(before.at(-1) as number));
    const { result, events } = await finished(run);

    const [cut, after] = ofType(events, 'toolExecutionEnd');
    expect(cut).toMatchObject({ toolCallId: 'cut', isError: true });
    expect(cut?.result).toBe(
      `interrupted: the connection to MCP server "everything" was lost during the call (the connection closed); it was not re-run (replay: 'never')`,
    );
    expect(after).toMatchObject({ toolCallId: 'after', result: 'Echo: still here', isError: false });
    expect(everythingLog.pids()).toHaveLength(before.length + 1);
    expect(everything.version).toBe(1);
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

  it('a stdio server killed between turns of a session: the next turn reconnects and works', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'one', name: 'everything__get-sum', arguments: { a: 1, b: 2 } }], usage: USAGE },
      { text: 'Three.', usage: USAGE },
      { toolCalls: [{ id: 'two', name: 'everything__get-sum', arguments: { a: 2, b: 3 } }], usage: USAGE },
      { text: 'Five.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [...everything.tools] });
    const first = await finished(agent.prompt('1 + 2'));
    const pids = everythingLog.pids();
    await kill(pids.at(-1) as number);
    const second = await finished(agent.prompt('2 + 3'));

    expect(ofType(first.events, 'toolExecutionEnd')[0]?.result).toBe('The sum of 1 and 2 is 3.');
    expect(ofType(second.events, 'toolExecutionEnd')[0]).toMatchObject({
      result: 'The sum of 2 and 3 is 5.',
      isError: false,
    });
    expect(everythingLog.pids()).toHaveLength(pids.length + 1);
    expectInvariants([...first.events, ...second.events], agent.messages);
    expectCounters(second.result.counters, {
      turns: 4,
      modelCalls: 4,
      toolCallsRequested: 2,
      toolCallsExecuted: 2,
      tokensIn: 40,
      tokensOut: 20,
    });
  });

  it('annotations feed requiresApproval (destructive asks, read-only does not); an approved write runs', async () => {
    const byName = new Map(files.tools.map((tool) => [tool.name, tool]));
    expect(byName.get('secure-filesystem-server__write_file')?.requiresApproval).toBe(true);
    expect(byName.get('secure-filesystem-server__read_text_file')?.requiresApproval).toBe(false);
    const target = join(dir, 'written.txt');
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'w', name: 'secure-filesystem-server__write_file', arguments: { path: target, content: 'new text' } },
        ],
        usage: USAGE,
      },
      { text: 'Written.', usage: USAGE },
    ]);
    const asked: string[] = [];
    const agent = createAgent({
      model,
      tools: [...files.tools],
      approval: (request) => (asked.push(request.toolName), { approved: true }),
    });
    const { result, events } = await finished(agent.prompt('write'));
    expect(asked).toEqual(['secure-filesystem-server__write_file']);
    expect(ofType(events, 'toolExecutionEnd')[0]).toMatchObject({
      isError: false,
      result: `Successfully wrote to ${target}`,
    });
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      approvalsRequested: 1,
      tokensIn: 20,
      tokensOut: 10,
    });
  });

  it('an elicitation request without a handler is declined, and the server says so in its result', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'ask', name: 'everything__trigger-elicitation-request', arguments: {} }], usage: USAGE },
      { text: 'Declined.', usage: USAGE },
    ]);
    const agent = createAgent({ model, tools: [...everything.tools] });
    const { result, events } = await finished(agent.prompt('ask me'));
    const end = ofType(events, 'toolExecutionEnd')[0];
    expect(end?.isError).toBe(false);
    expect(end?.result).toContain('User declined to provide the requested information.');
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
