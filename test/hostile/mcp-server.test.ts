import { afterEach, describe, expect, it } from 'vitest';
import { createAgent, type AgentEvent } from 'agentchart';
import { mcpTools, type McpToolset, type McpToolsOptions } from 'agentchart/mcp';
import { scriptedModel } from 'agentchart/testing';
import { HOSTILE } from '../mcp/support/servers.js';
import { expectTrusted, ofType, watchTheProcess } from './harness.js';

/**
 * An MCP stdio server that misbehaves: a result far too large (under and over the stdio read
 * limit), a stdin it closes while it keeps running (a broken pipe), and two tools whose names
 * collide once reduced. Each call gets a clear error result, the next call to the same server
 * works at once, and colliding tools are told apart with their own approval defaults.
 */

watchTheProcess();

const MIB = 1024 * 1024;
const toolsets: McpToolset[] = [];

async function hostile(options: McpToolsOptions = {}): Promise<McpToolset> {
  const toolset = await mcpTools({ command: process.execPath, args: [HOSTILE], stderr: 'ignore' }, options);
  toolsets.push(toolset);
  return toolset;
}

afterEach(async () => {
  await Promise.all(toolsets.splice(0).map((toolset) => toolset.close()));
});

/** Runs one tool call per turn, in order, and notes when each call's result arrived. */
async function callInTurns(
  toolset: McpToolset,
  calls: Array<{ name: string; arguments: Record<string, unknown>; delayMs?: number }>,
) {
  const model = scriptedModel([
    ...calls.map(({ delayMs, ...call }, index) => ({
      toolCalls: [{ id: `c${index}`, ...call }],
      ...(delayMs ? { delayMs } : {}),
    })),
    { text: 'done' },
  ]);
  const agent = createAgent({ model, tools: [...toolset.tools] });
  const endedAt = new Map<string, number>();
  const run = agent.prompt('go');
  run.events.subscribe((event: AgentEvent) => {
    if (event.type === 'toolExecutionEnd') endedAt.set(event.toolCallId, performance.now());
  });
  // The SDK buffers a big stdio message slowly (it copies the whole buffer per chunk): the test's timeout guards the wait.
  await run.result;
  const { result, events } = await expectTrusted(run, ['go']);
  expect(result.status).toBe('completed');
  const ends = ofType(events, 'toolExecutionEnd');
  const outcome = (id: string) => {
    const end = ends.find((event) => event.toolCallId === id);
    return { isError: end?.isError, result: end?.result };
  };
  return { outcome, endedAt: (id: string) => endedAt.get(id) ?? NaN };
}

const pidOf = (text: unknown) => Number(/pid (\d+)/.exec(String(text))?.[1]);

describe('MCP: a server that sends too much, breaks its pipe or names two tools alike', () => {
  it('an 11 MB result, past the stdio read limit: an error result naming the limit, an immediate reconnect, the next call works', async () => {
    const toolset = await hostile();
    const { outcome, endedAt } = await callInTurns(toolset, [
      { name: 'hostile__echo', arguments: { word: 'before' } },
      { name: 'hostile__big', arguments: { bytes: 11 * 1000 * 1000 } },
      { name: 'hostile__echo', arguments: { word: 'after' } },
    ]);
    expect(outcome('c1')).toEqual({
      isError: true,
      result:
        'result too large: a message from MCP server "hostile" passed the read limit of 10.0 MiB (10485760 bytes) ' +
        'during this call (maxResultBytes is 4.0 MiB (4194304 bytes)); the result was dropped and the server reconnected',
    });
    const after = outcome('c2');
    expect(after).toMatchObject({ isError: false, result: expect.stringMatching(/^after \(pid \d+, call 1\)$/) });
    // A new process answered: the broken stream was replaced at once, not when the old process exited.
    expect(pidOf(after.result)).not.toBe(pidOf(outcome('c0').result));
    expect(endedAt('c2') - endedAt('c1')).toBeLessThan(3_000);
  }, 60_000);

  it('a 6 MB result, over maxResultBytes but within the read limit: an error result naming its size, the same process goes on', async () => {
    const toolset = await hostile();
    const bytes = 6 * 1000 * 1000;
    const { outcome, endedAt } = await callInTurns(toolset, [
      { name: 'hostile__echo', arguments: { word: 'before' } },
      { name: 'hostile__big', arguments: { bytes } },
      { name: 'hostile__echo', arguments: { word: 'after' } },
    ]);
    const big = outcome('c1');
    expect(big.isError).toBe(true);
    expect(big.result).toMatch(
      /^result too large: MCP tool "big" of server "hostile" returned 5\.7 MiB \((\d+) bytes\), over its maxResultBytes of 4\.0 MiB \(4194304 bytes\); the result was dropped$/,
    );
    // The size of the result as JSON: the text and its envelope.
    expect(Number(/\((\d+) bytes\)/.exec(String(big.result))?.[1])).toBe(
      bytes + '{"content":[{"type":"text","text":""}]}'.length,
    );
    const after = outcome('c2');
    expect(after).toMatchObject({ isError: false, result: expect.stringMatching(/^after \(pid \d+, call 2\)$/) });
    expect(pidOf(after.result)).toBe(pidOf(outcome('c0').result));
    expect(endedAt('c2') - endedAt('c1')).toBeLessThan(3_000);
    // A server allowed more gives the whole result.
    const generous = await hostile({ maxResultBytes: 8 * MIB });
    const whole = await callInTurns(generous, [{ name: 'hostile__big', arguments: { bytes } }]);
    expect(whole.outcome('c0')).toEqual({ isError: false, result: 'x'.repeat(bytes) });
  }, 60_000);

  it('a broken pipe (the server closes its stdin but lives on): the call in flight fails at once, the server is reconnected', async () => {
    const toolset = await hostile({ timeouts: { callMs: 30_000 } });
    const { outcome, endedAt } = await callInTurns(toolset, [
      { name: 'hostile__echo', arguments: { word: 'first' } },
      { name: 'hostile__close_stdin', arguments: {} },
      // The server closes its stdin 50 ms after answering: this call is written into a broken pipe.
      { name: 'hostile__echo', arguments: { word: 'lost' }, delayMs: 300 },
      { name: 'hostile__echo', arguments: { word: 'again' } },
    ]);
    expect(outcome('c1')).toEqual({ isError: false, result: 'closing stdin' });
    expect(outcome('c2')).toEqual({
      isError: true,
      result:
        'interrupted: the connection to MCP server "hostile" was lost during the call (the stream to the server broke (EPIPE)); ' +
        "it was not re-run (replay: 'never')",
    });
    const again = outcome('c3');
    expect(again).toMatchObject({ isError: false, result: expect.stringMatching(/^again \(pid \d+, call 1\)$/) });
    expect(pidOf(again.result)).not.toBe(pidOf(outcome('c0').result));
    // Not the call timeout (30 s): the broken pipe is noticed at once.
    expect(endedAt('c2') - endedAt('c1')).toBeLessThan(3_000);
    expect(endedAt('c3') - endedAt('c2')).toBeLessThan(3_000);
  });

  it('with replay: safe, the call the broken pipe interrupted runs again on the new connection', async () => {
    const toolset = await hostile({ tools: { echo: { replay: 'safe' } } });
    const { outcome } = await callInTurns(toolset, [
      { name: 'hostile__echo', arguments: { word: 'first' } },
      { name: 'hostile__close_stdin', arguments: {} },
      { name: 'hostile__echo', arguments: { word: 'replayed' }, delayMs: 300 },
    ]);
    const replayed = outcome('c2');
    expect(replayed).toMatchObject({ isError: false, result: expect.stringMatching(/^replayed \(pid \d+, call 1\)$/) });
    expect(pidOf(replayed.result)).not.toBe(pidOf(outcome('c0').result));
  });

  it('"a.b" (read-only) and "a_b" (destructive): both kept, each under its own name with its own approval default', async () => {
    const toolset = await hostile();
    const names = toolset.tools.map((tool) => tool.name);
    const renamed = names.filter((name) => name.startsWith('hostile__a_b'));
    expect(renamed).toHaveLength(2);
    expect(names).not.toContain('hostile__a_b');
    for (const name of renamed) expect(name).toMatch(/^hostile__a_b_[0-9a-z]+$/);
    const byDescription = (description: string) => toolset.tools.find((tool) => tool.description === description);
    const readOnly = byDescription('Reads a.b.');
    const destructive = byDescription('Deletes a_b.');
    expect(readOnly?.requiresApproval).toBe(false);
    expect(destructive?.requiresApproval).toBe(true);

    // The names are stable: another load of the same list names them the same.
    const again = await hostile();
    expect(again.tools.map((tool) => tool.name)).toEqual(names);

    // Through an agent: only the destructive one asks for approval, and each reaches its own tool.
    const asked: string[] = [];
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'r', name: readOnly!.name, arguments: {} },
          { id: 'd', name: destructive!.name, arguments: {} },
        ],
      },
      { text: 'done' },
    ]);
    const agent = createAgent({
      model,
      tools: [...toolset.tools],
      approval: (request) => {
        asked.push(request.toolName);
        return { approved: true };
      },
    });
    const { result, events } = await expectTrusted(agent.prompt('go'), ['go']);
    expect(result.status).toBe('completed');
    expect(asked).toEqual([destructive!.name]);
    const results = Object.fromEntries(ofType(events, 'toolExecutionEnd').map((end) => [end.toolCallId, end.result]));
    expect(results).toEqual({ r: 'read a.b', d: 'deleted a_b' });
  });
});
