import { describe, expect, it } from 'vitest';
import type { PendingApproval } from 'agentchart';
import { checkInvariants } from 'agentchart/testing';
import { freshSession, journalLines, lastJson, runChild, type SessionReport } from './child-process.js';

/** A run waits for approval, its process exits; a fresh process answers with `resolveApproval`. */
describe('durable approvals survive a restart', () => {
  it('approve in a new process with the right version: the tool runs once and the session completes', async () => {
    const session = freshSession();
    const first = await runChild({ ...session, mode: 'start', approvals: 'durable' });
    expect(first.code, first.stderr).toBe(0);
    const { pending } = lastJson<{ pending: PendingApproval[] }>(first.stdout);
    expect(pending).toEqual([
      { toolCallId: 'd1', toolName: 'deploy', arguments: { target: 'prod' }, version: expect.any(Number) },
    ]);
    expect(journalLines(session.journal)).not.toContain('deploy:d1');

    const second = await runChild({
      ...session,
      mode: 'resume',
      approvals: 'durable',
      approve: { toolCallId: 'd1', version: pending[0]?.version, approved: true },
    });
    expect(second.code, second.stderr).toBe(0);
    const report = lastJson<SessionReport>(second.stdout);
    expect(journalLines(session.journal).filter((line) => line === 'deploy:d1')).toHaveLength(1);
    expect(checkInvariants(report.events, report.history).violations).toEqual([]);
    expect(report.events.filter((e) => e.type === 'toolApprovalRequested')).toHaveLength(1);
    expect(
      report.events
        .filter((e) => e.type === 'toolApprovalResolved')
        .map((e) => e.type === 'toolApprovalResolved' && e.approved),
    ).toEqual([true]);
    expect(report.history.find((m) => m.role === 'toolResult' && m.toolCallId === 'd1')).toMatchObject({
      content: 'deployed to prod',
      isError: false,
    });
  }, 60_000);

  it('a declined call never runs on resume', async () => {
    const session = freshSession();
    const first = await runChild({ ...session, mode: 'start', approvals: 'durable' });
    const { pending } = lastJson<{ pending: PendingApproval[] }>(first.stdout);
    const second = await runChild({
      ...session,
      mode: 'resume',
      approvals: 'durable',
      approve: { version: pending[0]?.version, approved: false },
    });
    const report = lastJson<SessionReport>(second.stdout);
    expect(journalLines(session.journal)).not.toContain('deploy:d1');
    expect(report.history.find((m) => m.role === 'toolResult' && m.toolCallId === 'd1')).toMatchObject({
      content: 'rejected: declined after restart',
      isError: true,
    });
    expect(checkInvariants(report.events, report.history).violations).toEqual([]);
  }, 60_000);

  it.each([
    ['a stale version', { version: 0 }, 'StaleVersion'],
    ['the wrong tool call id', { toolCallId: 'nope' }, 'UnknownToolCall'],
  ] as const)(
    '%s is rejected with a typed error and the tool does not run',
    async (_name, approve, code) => {
      const session = freshSession();
      const first = await runChild({ ...session, mode: 'start', approvals: 'durable' });
      const { pending } = lastJson<{ pending: PendingApproval[] }>(first.stdout);
      const second = await runChild({
        ...session,
        mode: 'resume',
        approvals: 'durable',
        approve: { version: pending[0]?.version, ...approve, approved: true },
      });
      expect(lastJson<{ error: string }>(second.stdout)).toEqual({ error: code });
      expect(journalLines(session.journal)).not.toContain('deploy:d1');
    },
    60_000,
  );
});
