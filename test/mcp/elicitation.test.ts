import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentError, createAgent, memoryStore, type AgentEvent, type ApprovalRequest } from 'agentchart';
import { mcpTools, type McpToolset } from 'agentchart/mcp';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, ofType } from '../support/harness.js';
import {
  closeQuickly,
  eventually,
  EVERYTHING,
  missingServers,
  observedStdio,
  ServerLog,
  tempDir,
} from './support/servers.js';

const USAGE = { input: 10, output: 5 };
const ASK = 'ev__trigger-elicitation-request';
const ANSWER = { name: 'Ada Lovelace', check: true };
const skip = missingServers();
if (skip) console.warn(`skipping the MCP elicitation suite: ${skip}`);

/** One turn calling the server's elicitation tool, then a closing text. */
function askingModel() {
  return scriptedModel([
    { toolCalls: [{ id: 'ask', name: ASK, arguments: {} }], usage: USAGE },
    { text: 'Done.', usage: USAGE },
  ]);
}

const COUNTERS = {
  turns: 2,
  modelCalls: 2,
  toolCallsRequested: 1,
  toolCallsExecuted: 1,
  approvalsRequested: 0,
  approvalsDenied: 0,
  tokensIn: 20,
  tokensOut: 10,
};

/** The call's events in order, the question's in between. */
function callLifecycle(events: AgentEvent[]): string[] {
  return events
    .filter((event) => 'toolCallId' in event && event.toolCallId === 'ask')
    .map((event) => (event.type === 'elicitationResolved' ? `${event.type}:${event.action}` : event.type));
}

describe.skipIf(skip !== null)('MCP elicitation through the agent approval path (server-everything, stdio)', () => {
  let everything: McpToolset;
  let log: ServerLog;

  beforeAll(async () => {
    log = new ServerLog(tempDir('elicitation'), 'everything');
    everything = await mcpTools(observedStdio(EVERYTHING, ['stdio'], log), { name: 'ev' });
  });
  afterAll(async () => {
    await closeQuickly(everything, log);
  });

  it("the agent's approval handler answers, the request marked as an elicitation; its arguments are the answer", async () => {
    const asked: ApprovalRequest[] = [];
    const agent = createAgent({
      model: askingModel(),
      tools: [...everything.tools],
      approvalMode: 'bypass',
      approval: (request) => {
        asked.push(request);
        return { approved: true, arguments: ANSWER };
      },
    });
    const { result, events } = await finished(agent.prompt('ask me'));

    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ toolCallId: 'ask', toolName: ASK, turnIndex: 0, arguments: {} });
    expect(asked[0]?.elicitation).toMatchObject({
      server: 'ev',
      message: 'Please provide inputs for the following fields:',
      requestedSchema: { type: 'object', required: ['name'] },
    });
    expect(callLifecycle(events)).toEqual([
      'toolExecutionStart',
      'elicitationRequested',
      'elicitationResolved:accept',
      'toolExecutionEnd',
    ]);
    const end = ofType(events, 'toolExecutionEnd')[0];
    expect(end?.result).toContain('✅ User provided the requested information!');
    expect(end?.result).toContain('- Name: Ada Lovelace');
    expect(result.status).toBe('completed');
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, COUNTERS);
  });

  it('a denial declines; a throwing handler declines too and is reported as a policyError', async () => {
    for (const approval of [
      () => ({ approved: false as const, reason: 'not now' }),
      () => {
        throw new Error('handler broke');
      },
    ]) {
      const agent = createAgent({
        model: askingModel(),
        tools: [...everything.tools],
        approvalMode: 'bypass',
        approval,
      });
      const { result, events } = await finished(agent.prompt('ask me'));
      const resolved = ofType(events, 'elicitationResolved')[0];
      expect(resolved).toMatchObject({ action: 'decline' });
      expect(ofType(events, 'toolExecutionEnd')[0]?.result).toContain(
        'User declined to provide the requested information.',
      );
      const errors = ofType(events, 'policyError');
      if (resolved?.reason === 'not now') expect(errors).toEqual([]);
      else {
        expect(resolved?.reason).toBe('the approval handler failed: handler broke');
        expect(errors).toMatchObject([{ slot: 'approval', message: 'handler broke', turnIndex: 0 }]);
      }
      expectInvariants(events, agent.messages);
      expectCounters(result.counters, COUNTERS);
    }
  });

  it('no handler and no store: declined at once, saying why, and the server says so in its result', async () => {
    const agent = createAgent({ model: askingModel(), tools: [...everything.tools] });
    const { result, events } = await finished(agent.prompt('ask me'));
    expect(ofType(events, 'elicitationResolved')).toMatchObject([
      { action: 'decline', reason: 'no approval handler is configured to answer it' },
    ]);
    expect(agent.pendingApprovals()).toEqual([]);
    expect(ofType(events, 'toolExecutionEnd')[0]).toMatchObject({
      isError: false,
      result: expect.stringContaining('User declined to provide the requested information.'),
    });
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, COUNTERS);
  });

  it('with a store and no handler: stored, listed by pendingApprovals() and answered by resolveApproval', async () => {
    const store = memoryStore();
    const agent = createAgent({ model: askingModel(), tools: [...everything.tools], store, sessionId: 's-elicit' });
    await agent.ready;
    const run = agent.prompt('ask me');
    const pending = await eventually(() => agent.pendingApprovals()[0], 'a pending elicitation');
    expect(pending).toMatchObject({
      toolCallId: 'ask',
      toolName: ASK,
      elicitation: { server: 'ev', message: 'Please provide inputs for the following fields:' },
    });
    // The request is in the store before it is listed: a host reading the session sees it.
    const stored = await store.loadEvents('s-elicit');
    expect(stored.map((event) => event.type)).toContain('elicitationRequested');
    expect((await store.load('s-elicit'))?.version).toBe(pending.version);

    expect(() => agent.resolveApproval('ask', { approved: 'yes' } as never, { version: pending.version })).toThrow(
      AgentError,
    );
    expect(() => agent.resolveApproval('ask', { approved: true }, { version: pending.version - 1 })).toThrow(
      /StaleVersion|stale/,
    );
    expect(agent.pendingApprovals()).toHaveLength(1);
    agent.resolveApproval('ask', { approved: true, arguments: ANSWER }, { version: pending.version });

    const { result, events } = await finished(run);
    expect(agent.pendingApprovals()).toEqual([]);
    expect(callLifecycle(events)).toEqual([
      'toolExecutionStart',
      'elicitationRequested',
      'elicitationResolved:accept',
      'toolExecutionEnd',
    ]);
    expect(ofType(events, 'toolExecutionEnd')[0]?.result).toContain('- Name: Ada Lovelace');
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, COUNTERS);
    // The stored log is the published one.
    expect((await store.loadEvents('s-elicit')).map((event) => event.seq)).toEqual(events.map((event) => event.seq));
  });

  it('an abort while the question waits cancels it; the call gets its aborted result', async () => {
    const agent = createAgent({
      model: askingModel(),
      tools: [...everything.tools],
      store: memoryStore(),
      sessionId: 's-abort',
    });
    await agent.ready;
    const run = agent.prompt('ask me');
    await eventually(() => agent.pendingApprovals()[0], 'a pending elicitation');
    agent.abort('user left');
    const { result, events } = await finished(run);
    expect(result).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    expect(ofType(events, 'elicitationResolved')).toMatchObject([{ action: 'cancel' }]);
    expect(ofType(events, 'toolExecutionEnd')[0]).toMatchObject({ toolCallId: 'ask', isError: true });
    expect(agent.pendingApprovals()).toEqual([]);
    expectInvariants(events, agent.messages);
    expectCounters(result.counters, {
      ...COUNTERS,
      turns: 1,
      modelCalls: 1,
      toolCallsFailed: 1,
      tokensIn: 10,
      tokensOut: 5,
    });
  });
});
