import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { InspectionEvent, Snapshot } from 'xstate';
import { z } from 'zod';
import type { MasterContext } from '../../machines/master.types.js';
import { AgentError, createAgent, defineTool, memoryStore, type AgentEvent, type SessionStore } from 'agentchart';
import type { SessionStep } from 'agentchart/store-kit';
import { checkInvariants, scriptedModel } from 'agentchart/testing';
import { lastJson } from '../support/processes.js';
import { fillTheDisk, type DiskFullReport } from './disk-full.js';

/** Store failures are fatal and typed: the run ends failed / storeFailed, no tool starts after, flush() rejects. */

const ran: string[] = [];
const work = defineTool({
  name: 'work',
  description: 'Does some work',
  parameters: z.object({ id: z.string() }),
  execute: async ({ id }) => {
    ran.push(id);
    return `did ${id}`;
  },
});
const twoCalls = () =>
  scriptedModel([
    {
      toolCalls: [
        { id: 'a', name: 'work', arguments: { id: 'a' } },
        { id: 'b', name: 'work', arguments: { id: 'b' } },
      ],
    },
    { text: 'Both done.' },
  ]);

/** Fails the write of the first step that carries an event matching `when`. */
function failingAt(
  store: SessionStore,
  when: (event: AgentEvent) => boolean,
  how: 'throw' | 'reject',
  failure = new Error('disk on fire'),
) {
  let failed = false;
  const write = (sessionId: string, step: SessionStep) => {
    if (!failed && step.events.some((e) => when(e as AgentEvent))) {
      failed = true;
      throw failure;
    }
    return store.commitStep(sessionId, step);
  };
  const commitStep = async (sessionId: string, step: SessionStep) => write(sessionId, step);
  return how === 'reject'
    ? ({ ...store, commitStepSync: undefined, commitStep } as SessionStore)
    : ({
        ...store,
        commitStep,
        commitStepSync: (sessionId: string, step: SessionStep) => void write(sessionId, step),
      } as SessionStore);
}

type MasterSnapshot = Snapshot<unknown> & { value: unknown; context: MasterContext };

async function runToEnd(agent: ReturnType<typeof createAgent>) {
  await agent.ready;
  const run = agent.prompt('do the work');
  const events: AgentEvent[] = [];
  run.events.subscribe((event) => events.push(event));
  const result = await run.result;
  return { result, events };
}

describe('a failed write ends the run at once', () => {
  it.each(['throw', 'reject'] as const)(
    'a store that fails to %s at the first tool result: failed / storeFailed, the second tool never starts, flush() rejects',
    async (how) => {
      ran.length = 0;
      const store = failingAt(memoryStore(), (e) => e.type === 'toolExecutionEnd', how);
      const agent = createAgent({
        model: twoCalls(),
        tools: [work],
        toolExecution: 'sequential',
        store,
        sessionId: 's',
      });
      const { result, events } = await runToEnd(agent);
      expect(result).toMatchObject({
        status: 'failed',
        endReason: 'fatalError',
        error: {
          code: 'storeFailed',
          message: expect.stringMatching(/session "s": the store failed to write a step \(disk on fire\)/),
        },
      });
      expect(ran).toEqual(['a']);
      // The run's failure is counted by its code, in the result and in agentEnd.
      expect(result.counters.failureCodes).toEqual({ storeFailed: 1 });
      expect(events.at(-1)).toMatchObject({ type: 'agentEnd', counters: { failureCodes: { storeFailed: 1 } } });
      expect(
        events
          .filter((e) => e.type === 'toolExecutionStart')
          .map((e) => e.type === 'toolExecutionStart' && e.toolCallId),
      ).toEqual(['a']);
      expect(checkInvariants(events, result.messages).violations).toEqual([]);
      await expect(agent.flush()).rejects.toMatchObject({ name: 'AgentError', code: 'StoreFailed' });
      expect(() => agent.prompt('again')).toThrow(expect.objectContaining({ code: 'StoreFailed' }));
    },
  );

  it('the chart decides that end: the STOP the runtime sends makes the master end failed / fatalError with the error', async () => {
    ran.length = 0;
    const store = failingAt(memoryStore(), (e) => e.type === 'toolExecutionEnd', 'reject');
    // The master's snapshots: the step that took the STOP, and the last one (its output).
    const master: Array<{ event: string; snapshot: MasterSnapshot }> = [];
    const inspect = (event: InspectionEvent) => {
      if (event.type === '@xstate.snapshot' && event.actorRef.sessionId === event.rootId) {
        master.push({
          event: event.event.type,
          snapshot: event.snapshot as MasterSnapshot,
        });
      }
    };
    const agent = createAgent({
      model: twoCalls(),
      tools: [work],
      toolExecution: 'sequential',
      store,
      sessionId: 's',
      inspect,
    });
    const { result, events } = await runToEnd(agent);
    const error = { code: 'storeFailed', message: expect.stringMatching(/the store failed to write a step/) };
    const stopped = master.filter((step) => step.event === 'STOP');
    expect(stopped).toHaveLength(1);
    // Decided as the STOP arrived, while the turn was still running (it closes after).
    expect(stopped[0]?.snapshot.value).toEqual({ running: 'turn' });
    expect(stopped[0]?.snapshot.context.end).toEqual({
      by: 'runtime',
      status: 'failed',
      endReason: 'fatalError',
      error,
    });
    const last = master.at(-1)?.snapshot;
    expect(last?.status).toBe('done');
    expect(last?.output).toMatchObject({ by: 'runtime', status: 'failed', endReason: 'fatalError', error });
    // The run reports the chart's end as is.
    expect(result).toMatchObject({ status: 'failed', endReason: 'fatalError', error });
    expect(events.at(-1)).toMatchObject({ type: 'agentEnd', status: 'failed', endReason: 'fatalError', error });
    expect(ran).toEqual(['a']);
  });

  it('the last step (agentEnd) fails to write: the result says storeFailed and counts it; agentEnd did not', async () => {
    ran.length = 0;
    const store = failingAt(memoryStore(), (e) => e.type === 'agentEnd', 'reject');
    const agent = createAgent({ model: twoCalls(), tools: [work], store, sessionId: 's' });
    const { result, events } = await runToEnd(agent);
    expect(result).toMatchObject({ status: 'failed', endReason: 'fatalError', error: { code: 'storeFailed' } });
    expect(result.counters.failureCodes).toEqual({ storeFailed: 1 });
    expect(agent.counters.failureCodes).toEqual({ storeFailed: 1 });
    expect(result.counters).toMatchObject({ turns: 2, modelCalls: 2, toolCallsRequested: 2, toolCallsExecuted: 2 });
    // agentEnd went out before the write failed: its counters are the run's as published.
    expect(events.at(-1)).toMatchObject({ type: 'agentEnd', status: 'completed', counters: { failureCodes: {} } });
    expect(checkInvariants(events, result.messages).violations).toEqual([]);
    await expect(agent.flush()).rejects.toMatchObject({ code: 'StoreFailed' });
  });

  it('a refused version (another writer advanced the session) is a store failure too', async () => {
    ran.length = 0;
    const base = memoryStore();
    let sneaked = false;
    const store: SessionStore = {
      ...base,
      commitStepSync: (sessionId, step) => {
        if (!sneaked && step.events.some((e) => e.type === 'toolExecutionStart')) {
          sneaked = true;
          // Another process writes the same version first.
          base.commitStepSync(sessionId, step);
        }
        base.commitStepSync(sessionId, step);
      },
    };
    const agent = createAgent({ model: twoCalls(), tools: [work], toolExecution: 'sequential', store, sessionId: 's' });
    const { result, events } = await runToEnd(agent);
    expect(result).toMatchObject({
      status: 'failed',
      error: { code: 'storeFailed', message: expect.stringContaining('StaleVersion') },
    });
    expect(ran).toEqual([]);
    expect(result.counters.failureCodes).toEqual({ storeFailed: 1 });
    expect(agent.counters.failureCodes).toEqual({ storeFailed: 1 });
    expect(checkInvariants(events, result.messages).violations).toEqual([]);
    await expect(agent.flush()).rejects.toMatchObject({ code: 'StoreFailed' });
  });

  it('an async store: every step is written before the next tool starts and before the run ends', async () => {
    ran.length = 0;
    const base = memoryStore();
    const log: string[] = [];
    const store: SessionStore = {
      ...base,
      commitStepSync: undefined,
      commitStep: async (sessionId, step) => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        base.commitStepSync(sessionId, step);
        for (const event of step.events)
          if (event.type === 'toolExecutionStart') log.push(`written start ${event.toolCallId}`);
      },
    };
    const logging = defineTool({
      ...work,
      name: 'work',
      execute: async ({ id }: { id: string }) => (log.push(`run ${id}`), `did ${id}`),
    });
    const agent = createAgent({
      model: twoCalls(),
      tools: [logging],
      toolExecution: 'sequential',
      store,
      sessionId: 's',
    });
    const { result } = await runToEnd(agent);
    expect(result.status).toBe('completed');
    expect(log).toEqual(['written start a', 'run a', 'written start b', 'run b']);
    // The run's result came after its last step (agentEnd) was written.
    expect((await base.loadEvents('s')).at(-1)?.type).toBe('agentEnd');
  });
});

/**
 * A small disk: a 1 MB tmpfs where mounts work (root), else a child process whose files may not
 * grow past 1 MB (`ulimit -f`: a write past it fails with EFBIG, which SQLite reports as an I/O
 * error). `AGENTCHART_SMALL_DISK=file-size-limit` takes the second way even where mounts work.
 */
function smallDisk(): { kind: 'tmpfs'; dir: string; unmount(): void } | { kind: 'fileSizeLimit'; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'agentchart-full-'));
  if (process.env.AGENTCHART_SMALL_DISK !== 'file-size-limit') {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'pipe' });
      return { kind: 'tmpfs', dir, unmount: () => execFileSync('umount', ['-l', dir]) };
    } catch (error) {
      console.log(`disk-full test: no tmpfs here (${(error as Error).message.split('\n')[0]}); limiting the file size`);
    }
  }
  return { kind: 'fileSizeLimit', dir };
}

/** The session in a child whose file size is limited to 1 MB (`ulimit -f` counts 512-byte blocks in sh). */
async function fillTheDiskInChild(dir: string): Promise<DiskFullReport> {
  const child = fileURLToPath(new URL('./disk-full-child.ts', import.meta.url));
  const ran = spawnSync('sh', ['-c', 'ulimit -f 2048 && exec "$@"', 'sh', process.execPath, '--import', 'tsx', child], {
    env: { ...process.env, AGENTCHART_DISK_FULL_DIR: dir },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (ran.status !== 0) throw new Error(`the disk-full child exited ${ran.status ?? ran.signal}: ${ran.stderr}`);
  return lastJson<DiskFullReport>(ran.stdout);
}

describe('disk full', () => {
  const disk = smallDisk();
  afterAll(() => (disk.kind === 'tmpfs' ? disk.unmount() : rmSync(disk.dir, { recursive: true, force: true })));
  it('SQLite on a full 1 MB disk: the run ends failed / storeFailed naming the failed write, flush() rejects', async () => {
    const report = disk.kind === 'tmpfs' ? await fillTheDisk(disk.dir) : await fillTheDiskInChild(disk.dir);
    // A full tmpfs is SQLITE_FULL; a write past the file size limit is SQLite's I/O error. Either way
    // the message says the write failed, and never that the file is corrupted.
    const failedWrite =
      disk.kind === 'tmpfs'
        ? /the write failed: no space left on the device/
        : /the write failed: (an I\/O error|no space left on the device)/;
    expect(report).toMatchObject({
      status: 'failed',
      endReason: 'fatalError',
      error: { code: 'storeFailed', message: expect.stringMatching(failedWrite) },
      flush: 'AgentError StoreFailed',
      // What was written before the disk filled still loads.
      firstMessage: { role: 'user', content: 'fill the disk' },
    });
    expect(report.error?.message).not.toMatch(/corrupt/i);
    expect(report.toolsRun).toBeGreaterThan(0);
    expect(report.toolsRun).toBeLessThan(20);
  });
});
