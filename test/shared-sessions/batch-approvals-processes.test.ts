import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from 'agentchart/sqlite';
import { checkInvariants } from 'agentchart/testing';
import { bundleChild, lines, spawnChild, withReports, until } from '../support/processes.js';
import type { BatchApprovalConfig, BatchApprovalReport } from './batch-approval-child.js';

/**
 * A durable batch of three approvals across processes on one SQLite file: process 1's run parks with all
 * three waiting (the process stays up); three more processes each answer one, in the order a human clicks,
 * and the run moves from process to process, parking again while calls wait; a stale answer from a fourth is
 * refused. Each approved tool runs once, in the process that answered last before it ran.
 */

const CHILD = await bundleChild(new URL('./batch-approval-child.ts', import.meta.url));
afterAll(() => rmSync(fileURLToPath(CHILD), { force: true }));

function web() {
  const dir = mkdtempSync(join(tmpdir(), 'agentchart-batch-approval-'));
  const base = { db: join(dir, 'sessions.db'), journal: join(dir, 'journal.txt') };
  const spawn = (config: Omit<BatchApprovalConfig, 'db' | 'journal'>) => {
    return withReports<BatchApprovalReport>(spawnChild(CHILD, 'AGENTCHART_BATCH_APPROVAL', { ...base, ...config }));
  };
  const answer = async (region: string, approved: boolean, versionOffset?: number) => {
    const approver = spawn({
      role: 'approver',
      answer: { region, approved, ...(versionOffset ? { versionOffset } : {}) },
    });
    const exit = await approver.exited;
    expect(exit.code, exit.stderr).toBe(0);
    return approver.reports().at(-1) as BatchApprovalReport;
  };
  return { ...base, spawn, answer };
}

const ids = (list: BatchApprovalReport['pending']) => (list ?? []).map((pending) => pending.arguments.region);

describe('a durable batch of approvals across processes (one SQLite file)', () => {
  it('answered ap, eu (a stale answer between), us from three processes: each tool once, the run ends in the last', async () => {
    const session = web();
    const starter = session.spawn({ role: 'starter' });
    await until(() => starter.reports().some((r) => r.parked), 'the starter to park with its batch');
    const parked = starter.reports().find((r) => r.parked)?.parked ?? [];
    const version = parked[0]?.version;
    expect(parked).toEqual(
      ['eu', 'us', 'ap'].map((region, i) => ({
        toolCallId: `d${i}`,
        toolName: 'deploy',
        arguments: { region },
        version,
      })),
    );

    const first = await session.answer('ap', true);
    expect(ids(first.pending)).toEqual(['eu', 'us', 'ap']);
    expect(first.events?.[0]).toBe('toolApprovalResolved');
    expect(first.events).not.toContain('toolExecutionStart');
    expect(first.after).toEqual(parked.slice(0, 2));
    expect((await starter.exited).code).toBe(0);
    expect(starter.reports().at(-1)?.result).toEqual({ status: 'movedOn', endReason: 'movedOn' });

    const stale = await session.answer('eu', true, 1);
    expect(stale.refused).toMatchObject({ code: 'StaleVersion' });
    const second = await session.answer('eu', true);
    expect(ids(second.pending)).toEqual(['eu', 'us']);
    expect(second.after).toEqual(parked.slice(1, 2));

    const last = await session.answer('us', false);
    expect(ids(last.pending)).toEqual(['us']);
    expect(last.result).toEqual({ status: 'completed', endReason: 'naturalEnd' });
    expect(last.events).toEqual(expect.arrayContaining(['toolExecutionStart', 'toolExecutionEnd', 'agentEnd']));
    // The batch ran once, in the process that gave the last answer.
    expect(lines(session.journal).sort()).toEqual([`deploy ap ${last.pid}`, `deploy eu ${last.pid}`]);

    const store = sqliteStore(session.db);
    const checkpoint = await store.load('web');
    const events = await store.loadEvents('web');
    await store.close();
    expect(checkInvariants(events, checkpoint?.history ?? []).violations).toEqual([]);
    const approvals = events.flatMap((event) =>
      event.type === 'toolApprovalRequested'
        ? [`ask:${event.toolCallId}`]
        : event.type === 'toolApprovalResolved'
          ? [`${event.approved ? 'approved' : 'denied'}:${event.toolCallId}`]
          : [],
    );
    expect(approvals).toEqual(['ask:d0', 'ask:d1', 'ask:d2', 'approved:d2', 'approved:d0', 'denied:d1']);
    expect(checkpoint?.counters).toMatchObject({
      approvalsRequested: 3,
      approvalsDenied: 1,
      toolCallsExecuted: 2,
      toolCallsRejected: 1,
    });
  }, 90_000);
});
