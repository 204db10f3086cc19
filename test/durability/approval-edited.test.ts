import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type AgentEvent, type SessionStore } from 'agentchart';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { diesAfter } from './dying-store.js';

// Approved with edited arguments (approveWith), then the process dies before the call is done: the
// resumed call runs with the arguments the user approved, never with the model's. The edit is part
// of the approval: losing it on a restart would run what the user refused to run as asked.

const EDITED = { path: 'reviewed.txt' };

/** A write that needs approval; in the first process it never finishes (the process dies in it). */
function writeTool(ran: unknown[], replay: 'safe' | 'never', hangs: boolean) {
  return defineTool({
    name: 'write',
    description: 'Writes a file.',
    parameters: z.object({ path: z.string() }),
    requiresApproval: true,
    replay,
    execute: async (args) => {
      ran.push(args);
      if (hangs) await new Promise(() => {});
      return `wrote ${args.path}`;
    },
  });
}

const agentOn = (store: SessionStore, ran: unknown[], replay: 'safe' | 'never', first: boolean) =>
  createAgent({
    model: scriptedModel([
      ...(first ? [{ toolCalls: [{ id: 'w1', name: 'write', arguments: { path: 'model.txt' } }] }] : []),
      { text: 'Written.' },
    ]),
    tools: [writeTool(ran, replay, first)],
    store,
    sessionId: 's',
  });

/** The first process: asked, approved with EDITED, and dead after `cut` was written. */
async function approvedThenDied(
  store: SessionStore,
  ran: unknown[],
  replay: 'safe' | 'never',
  cut: AgentEvent['type'],
) {
  const first = agentOn(
    diesAfter(store, (step) => step.events.some((event) => event.type === cut)),
    ran,
    replay,
    true,
  );
  await first.ready;
  void first.prompt('write it').result;
  await expect.poll(() => first.pendingApprovals().length).toBe(1);
  const [pending] = first.pendingApprovals();
  first.resolveApproval('w1', { approved: true, arguments: EDITED }, { version: pending!.version });
  await expect.poll(() => ran.length).toBe(1);
  await first.close();
}

describe('approved with edited arguments, then a restart', () => {
  it.each([
    ['the approval was stored', 'never' as const, 'toolApprovalResolved' as const],
    ['the approval was stored', 'safe' as const, 'toolApprovalResolved' as const],
    ['the call had started', 'safe' as const, 'toolExecutionStart' as const],
  ])("after %s (replay '%s'): the resumed call runs with the approved arguments", async (_, replay, cut) => {
    const store = memoryStore();
    const ran: unknown[] = [];
    await approvedThenDied(store, ran, replay, cut);
    expect(ran).toEqual([EDITED]);

    const second = agentOn(store, ran, replay, false);
    const { resumedRun } = await second.ready;
    const result = await resumedRun!.result;
    const events = await store.loadEvents('s');

    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    // Run again, with the edit: never with the model's arguments.
    expect(ran).toEqual([EDITED, EDITED]);
    expect(result.messages.find((message) => message.role === 'toolResult')).toMatchObject({
      toolCallId: 'w1',
      content: 'wrote reviewed.txt',
      isError: false,
    });
    const starts = events.filter((event) => event.type === 'toolExecutionStart');
    expect(starts.map((event) => event.arguments)).toEqual([EDITED]);
    // Asked once, decided once, across both processes.
    expect(events.filter((event) => event.type === 'toolApprovalRequested')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'toolApprovalResolved')).toHaveLength(1);
    expect(checkInvariants(events, result.messages).violations).toEqual([]);
    expect(result.counters).toMatchObject({ approvalsRequested: 1, toolCallsExecuted: 1, toolCallsFailed: 0 });
    await second.close();
  });

  it('a second restart before the call is done keeps the edit too', async () => {
    const store = memoryStore();
    const ran: unknown[] = [];
    await approvedThenDied(store, ran, 'safe', 'toolApprovalResolved');
    // The second process dies inside the call as well.
    const second = agentOn(store, ran, 'safe', true);
    const { resumedRun } = await second.ready;
    void resumedRun!.result;
    await expect.poll(() => ran.length).toBe(2);
    await second.close();

    const third = agentOn(store, ran, 'safe', false);
    const result = await (await third.ready).resumedRun!.result;
    expect(ran).toEqual([EDITED, EDITED, EDITED]);
    expect(result).toMatchObject({ status: 'completed' });
    expect(result.messages.find((message) => message.role === 'toolResult')).toMatchObject({
      content: 'wrote reviewed.txt',
    });
    await third.close();
  });
});
