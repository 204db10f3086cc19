// The shared handlers reach a busy run on Restate: steering, follow-ups, approvals, abort; refusals
// are terminal errors named by their code; a new session answers empty.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent, PendingApproval, RunResult, SteerReceipt } from 'agentchart';
import {
  serverInstalled,
  sleep,
  startServerWithWorker,
  waitUntil,
  type RestateServer,
  type Worker,
} from './support/restate-server.js';
import { countLines, expectParity, waitForLine } from './support/session-log.js';

describe.runIf(serverInstalled('the Restate handler suite'))('Restate: the shared handlers reach the session', () => {
  let server: RestateServer;
  let worker: Worker;
  const logs = mkdtempSync(join(tmpdir(), 'agentchart-restate-logs-'));

  beforeAll(async () => {
    ({ server, worker } = await startServerWithWorker(logs));
  }, 60_000);

  afterAll(async () => {
    await worker?.kill();
    await server?.stop();
  });

  const pendingOf = async (sessionId: string) =>
    (await server.call<PendingApproval[]>('Agent', sessionId, 'pendingApprovals')).body;

  it('a new session answers empty arrays', async () => {
    expect(await server.call('Agent', 'fresh-1', 'messages')).toEqual({ status: 200, body: [] });
    expect(await server.call('Agent', 'fresh-1', 'pendingApprovals')).toEqual({ status: 200, body: [] });
    expect(await server.call('Agent', 'fresh-1', 'events', { afterSeq: -1 })).toEqual({ status: 200, body: [] });
  });

  it('values JSON cannot hold: a refused progress update is an error for the tool, never a failed journal step', async () => {
    const sessionId = 'values-1';
    const { status, body: result } = await server.call<RunResult>('Agent', sessionId, 'prompt', 'Report.');
    expect(status).toBe(200);
    expect(result).toMatchObject({
      status: 'completed',
      endReason: 'naturalEnd',
      counters: { toolCallsExecuted: 3, toolCallsFailed: 1, failureCodes: {} },
    });
    const refusal = (tool: string, problem: string) =>
      `ctx.update (tool "${tool}"): ${problem}; an update must be a JSON value, and this one was not published`;
    expect(
      result.messages.flatMap((message) => (message.role === 'toolResult' ? [[message.content, message.isError]] : [])),
    ).toEqual([
      [`refused: ${refusal('progress', 'partial.bytes is a BigInt')}`, false],
      [refusal('tally', 'partial.self refers back to itself (a cycle)'), true],
      ['booked bigint 5', false],
    ]);
    const events = await expectParity(server, sessionId, result);
    expect(
      events.flatMap((event) => (event.type === 'toolExecutionUpdate' ? [[event.toolCallId, event.partial]] : [])),
    ).toEqual([['v1', { done: 1 }]]);
    expect(events.find((event) => event.type === 'toolExecutionStart' && event.toolCallId === 'v3')).toMatchObject({
      arguments: { amount: '5n' },
    });
  });

  it(
    'C1 on Restate: a steer sent through the shared handler while ' +
      'a tool runs interrupts it and is answered with its receipt',
    async () => {
      const sessionId = 'steer-1';
      const answer = server.call<RunResult>('Agent', sessionId, 'prompt', 'Wait for it.');
      await waitForLine(logs, sessionId, 'tool-start s1');
      const receipt = await server.call<SteerReceipt>('Agent', sessionId, 'steer', 'Change of plan');
      expect(receipt).toEqual({ status: 200, body: { status: 'delivered', turnIndex: 1 } });
      const { status, body: result } = await answer;
      expect(status).toBe(200);
      expect(result).toMatchObject({
        status: 'completed',
        endReason: 'naturalEnd',
        counters: { steeringDelivered: 1, turns: 2 },
      });
      expect(
        result.messages.map((message) =>
          message.role === 'assistant' ? message.content.find((block) => block.type === 'text') : message.content,
        ),
      ).toEqual([
        'Wait for it.',
        { type: 'text', text: 'Waiting.' },
        'cancelled: steering (the user sent a new message; this call was interrupted)',
        'Change of plan',
        { type: 'text', text: 'Heard: Change of plan' },
      ]);
      // The tool saw its signal after the grace period (a durable timer) and the model was asked once per turn.
      expect(countLines(logs, sessionId, 'tool-end s1 aborted')).toBe(1);
      expect(countLines(logs, sessionId, 'model')).toBe(2);
      const events = await expectParity(server, sessionId, result);
      expect(events.find((event) => event.type === 'turnEnd')).toMatchObject({ reason: 'steeringInterrupt' });
    },
  );

  it(
    'T3 on Restate: refusals are terminal and named; the approval ' +
      'and a follow-up (L4) sent while the run waits take effect',
    async () => {
      const sessionId = 'approve-1';
      const answer = server.call<RunResult>('Agent', sessionId, 'prompt', 'Deploy it.');
      let pending: PendingApproval[] = [];
      await waitUntil('the pending approval', async () => (pending = await pendingOf(sessionId)).length === 1);
      const { toolCallId, version } = pending[0]!;
      expect(toolCallId).toBe('a1');

      const stale = await server.call<{ message: string }>('Agent', sessionId, 'resolveApproval', {
        toolCallId,
        decision: { approved: true },
        version: version + 7,
      });
      expect(stale.status).toBe(409);
      expect(stale.body.message).toContain('StaleVersion');
      const unknown = await server.call<{ message: string }>('Agent', sessionId, 'resolveApproval', {
        toolCallId: 'nope',
        decision: { approved: true },
        version,
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body.message).toContain('UnknownToolCall');
      const invalid = await server.call<{ message: string }>('Agent', sessionId, 'resolveApproval', {
        toolCallId,
        decision: { approved: 'yes' },
        version,
      });
      expect(invalid.status).toBe(400);
      expect(invalid.body.message).toContain('InvalidInput');
      const badSteer = await server.call<{ message: string }>('Agent', sessionId, 'steer', { role: 'robot' });
      expect(badSteer.status).toBe(400);
      expect(badSteer.body.message).toContain('InvalidInput');
      // Refused: the approval is still pending, at the same version.
      expect(await pendingOf(sessionId)).toEqual(pending);

      const followUp = server.call<SteerReceipt>('Agent', sessionId, 'followUp', 'And then report.');
      await sleep(300);
      expect(
        await server.call('Agent', sessionId, 'resolveApproval', { toolCallId, decision: { approved: true }, version }),
      ).toEqual({ status: 200, body: null });
      const { body: result } = await answer;
      expect(result).toMatchObject({
        status: 'completed',
        counters: { approvalsRequested: 1, followUpsDelivered: 1, toolCallsExecuted: 1 },
      });
      expect((await followUp).body).toMatchObject({ status: 'delivered' });
      expect(countLines(logs, sessionId, 'tool-start a1')).toBe(1);
      expect(await pendingOf(sessionId)).toEqual([]);
      await expectParity(server, sessionId, result);
    },
  );

  it(
    'C3 and C7 on Restate: abort cancels the run (aborted, parity); ' +
      'the next prompt continues from the stored history',
    async () => {
      const sessionId = 'abort-1';
      const answer = server.call<RunResult>('Agent', sessionId, 'prompt', 'Wait a long time.');
      await waitForLine(logs, sessionId, 'tool-start x0');
      expect(await server.call('Agent', sessionId, 'abort', 'user stop')).toEqual({ status: 200, body: null });
      const { status, body: aborted } = await answer;
      expect(status).toBe(200);
      // The reason reaches the run through the inbox, before Restate's cancellation does.
      expect(aborted).toMatchObject({
        status: 'aborted',
        endReason: 'aborted',
        error: { code: 'aborted', message: 'user stop' },
      });
      expect(aborted.messages.at(-1)).toMatchObject({ role: 'toolResult', toolCallId: 'x0', isError: true });
      expect(countLines(logs, sessionId, 'tool-end x0 aborted')).toBe(1);
      const first = await expectParity(server, sessionId, aborted);

      const { body: next } = await server.call<RunResult>('Agent', sessionId, 'prompt', 'again');
      expect(next).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
      expect(next.messages.slice(0, aborted.messages.length)).toEqual(aborted.messages);
      expect(next.messages.at(-1)).toMatchObject({
        role: 'assistant',
        content: [{ type: 'text', text: 'Continuing after the abort.' }],
      });
      const second = await expectParity(server, sessionId, next, 2);
      expect(second[0]!.runId).not.toBe(first[0]!.runId);
      // The first run's events stay readable by its run id.
      const byRun = await server.call<AgentEvent[]>('Agent', sessionId, 'events', {
        afterSeq: -1,
        runId: first[0]!.runId,
      });
      expect(byRun.body).toEqual(first);
      const latest = await server.call<AgentEvent[]>('Agent', sessionId, 'events', {
        afterSeq: second.length - 3,
        runId: second[0]!.runId,
      });
      expect(latest.body).toEqual(second.slice(-2));
    },
  );

  it('C3 on Restate: cancelling the invocation through the admin API aborts the run with parity', async () => {
    const sessionId = 'abort-2';
    const { invocationId } = await server.send('Agent', sessionId, 'prompt', 'Wait a long time.');
    await waitForLine(logs, sessionId, 'tool-start x0');
    expect(
      (await fetch(`${server.admin}/invocations/${invocationId}/cancel`, { method: 'PATCH' })).status,
    ).toBeLessThan(300);
    const attached = await fetch(`${server.ingress}/restate/invocation/${invocationId}/attach`);
    expect(attached.status).toBe(200);
    const result = (await attached.json()) as RunResult;
    expect(result).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    await expectParity(server, sessionId, result);
  });

  it('a steer sent while no run is active is kept and delivered by the next run', async () => {
    const sessionId = 'idle-1';
    expect((await server.call<SteerReceipt>('Agent', sessionId, 'steer', 'queued note')).body).toEqual({
      status: 'stillQueued',
    });
    const { body: result } = await server.call<RunResult>('Agent', sessionId, 'prompt', 'hello');
    expect(result).toMatchObject({ status: 'completed', counters: { steeringDelivered: 1 } });
    expect(result.messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      'hello',
      'queued note',
    ]);
    await expectParity(server, sessionId, result);
  });

  it('a prompt that is not a message is refused with InvalidInput', async () => {
    const answer = await server.call<{ message: string }>('Agent', 'bad-1', 'prompt', { role: 'robot', content: 1 });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain('InvalidInput');
    expect((await server.call('Agent', 'bad-1', 'events', { afterSeq: 'x' })).status).toBe(400);
  });
});
