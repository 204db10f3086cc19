import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createAgent, defineTool, memoryStore, type AgentEvent, type SessionStore } from 'agentchart';
import { otelObserver } from 'agentchart/otel';
import { scriptedModel } from 'agentchart/testing';
import { expectCounters, expectInvariants, settle } from '../support/harness.js';
import { fromReadable, spanTree, type SpanNode } from './span-tree.js';

// OpenTelemetry: a durable session resumed after a restart continues under the same conversation id.
// The first agent stops while a durable approval is pending (its process "dies": its open spans are
// never exported); a second agent on the same store resumes the run and finishes it.

const SESSION = 'resumed-session';

function agentOn(store: SessionStore, tracerProvider: BasicTracerProvider, journal: string[]) {
  const clock = new SimulatedClock();
  const model = scriptedModel(
    (request) =>
      request.messages.some((m) => m.role === 'toolResult')
        ? { text: 'Deployed.', usage: { input: 9, output: 2 } }
        : { toolCalls: [{ id: 'd1', name: 'deploy', arguments: { target: 'prod' } }], usage: { input: 7, output: 3 } },
    { name: 'gamma', provider: 'openai', clock },
  );
  const deploy = defineTool({
    name: 'deploy',
    description: 'Deploys a release.',
    parameters: z.object({ target: z.string() }),
    requiresApproval: true,
    execute: ({ target }) => (journal.push(`deploy:${target}`), `deployed to ${target}`),
  });
  const otel = otelObserver({ tracer: tracerProvider.getTracer('agentchart') });
  // The restarted process is the same lease owner (the first one never released its lease).
  return createAgent({
    model,
    tools: [deploy],
    clock,
    store,
    sessionId: SESSION,
    otel,
    lease: { owner: 'deploy-worker' },
  });
}

const nodes = (tree: SpanNode[]): SpanNode[] => tree.flatMap((node) => [node, ...nodes(node.children)]);
const conversationIds = (spans: SpanNode[]) =>
  spans.filter((s) => /^(invoke_agent|chat )/.test(s.name)).map((s) => s.attributes['gen_ai.conversation.id']);

describe('OpenTelemetry: a durable session resumed after a restart', () => {
  it('keeps gen_ai.conversation.id: the resumed run keeps its run id, later runs the conversation', async () => {
    let restartedAfter = 0;
    const store = memoryStore({ now: () => Date.now() + restartedAfter });
    const memory = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
    const journal: string[] = [];

    const first = agentOn(store, tracerProvider, journal);
    await first.ready;
    const run = first.prompt('Ship it.');
    for (let i = 0; i < 50 && first.pendingApprovals().length === 0; i++) await settle(1);
    expect(first.pendingApprovals()).toMatchObject([{ toolCallId: 'd1', toolName: 'deploy' }]);
    await first.flush();
    // The first process is gone: only the spans it ended (the model call) were exported.
    const beforeRestart = spanTree(memory.getFinishedSpans().map(fromReadable));
    expect(beforeRestart.map((node) => node.name)).toEqual(['chat gamma']);
    memory.reset();
    // The restarted process comes up after the dead one's lease (30 s) has lapsed.
    restartedAfter += 60_000;

    const second = agentOn(store, tracerProvider, journal);
    // The run waits for its approval (parked): loading the session leaves it so; the answer continues it.
    expect(await second.ready).toEqual({ resumedRun: null });
    const [pending] = second.pendingApprovals();
    const resumedRun = second.resolveApproval('d1', { approved: true }, { version: pending?.version ?? -1 });
    expect(resumedRun.runId).toBe(run.runId);
    const resumed = await resumedRun.result;
    expect(resumed).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(journal).toEqual(['deploy:prod']);

    const resumedTree = spanTree(memory.getFinishedSpans().map(fromReadable));
    expect(resumedTree).toHaveLength(1);
    const agentSpan = resumedTree[0]!;
    expect(agentSpan).toMatchObject({
      name: 'invoke_agent',
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.conversation.id': SESSION,
        'agentchart.run.id': run.runId,
        'agentchart.run.resumed': true,
        'agentchart.run.status': 'completed',
        'agentchart.run.end_reason': 'naturalEnd',
      },
      status: { code: 'UNSET' },
    });
    // The turn the restart cut is reopened by its first event after the restart; the next turn is fresh.
    expect(
      agentSpan.children.map((turn) => [
        turn.attributes['agentchart.turn.index'],
        turn.attributes['agentchart.run.resumed'],
        turn.children.map((c) => c.name),
      ]),
    ).toEqual([
      [0, true, ['execute_tool deploy']],
      [1, undefined, ['chat gamma']],
    ]);
    expect(agentSpan.children[0]?.events).toEqual([
      {
        name: 'tool_approval_resolved',
        attributes: { 'gen_ai.tool.name': 'deploy', 'gen_ai.tool.call.id': 'd1', 'agentchart.approval.approved': true },
      },
    ]);
    expect(conversationIds([...nodes(beforeRestart), ...nodes(resumedTree)])).toEqual([SESSION, SESSION, SESSION]);

    // A later run of the restarted agent: a new run id, the same conversation.
    memory.reset();
    const later = second.prompt('And the changelog?');
    const laterResult = await later.result;
    const laterTree = spanTree(memory.getFinishedSpans().map(fromReadable));
    expect(
      laterTree.map((node) => [
        node.name,
        node.attributes['agentchart.run.id'],
        node.attributes['agentchart.run.resumed'],
      ]),
    ).toEqual([['invoke_agent', later.runId, undefined]]);
    expect(later.runId).not.toBe(run.runId);
    expect(conversationIds(nodes(laterTree))).toEqual([SESSION, SESSION]);

    // The stored log of the whole session (the cut run, its resumption, the later run) is well-formed.
    const stored: AgentEvent[] = await store.loadEvents(SESSION);
    expectInvariants(stored, laterResult.messages);
    expectCounters(laterResult.counters, {
      turns: 3,
      modelCalls: 3,
      toolCallsRequested: 1,
      toolCallsExecuted: 1,
      approvalsRequested: 1,
      tokensIn: 25,
      tokensOut: 7,
    });
    await tracerProvider.shutdown();
  });
});
