// A worker of the shared-sessions test: continues the sessions of one Postgres database (a new one
// starts its queued job, an interrupted one is resumed) until every session is finished. The test
// kills workers with SIGKILL at random and starts new ones.
import { appendFileSync, openSync, closeSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { AgentError, createAgent, defineTool } from 'agentchart';
import { postgresStore } from 'agentchart/postgres';
import { scriptedModel } from 'agentchart/testing';
import { runAsProcess } from '../support/processes.js';

export interface WorkerConfig {
  connectionString: string;
  sessions: number;
  /** Journal lines: `start <session> <call> <pid>`, `end …`, `resume <session> <pid>`, `overlap <session> <pid> <other pid>`. */
  dir: string;
  ttlMs: number;
}

const config = JSON.parse(process.env.AGENTCHART_WORKER ?? '{}') as WorkerConfig;
const journalPath = join(config.dir, 'journal.txt');
const journal = (line: string) => appendFileSync(journalPath, `${line} ${process.pid}\n`);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Marks `session` as running in this process; another live process marking it too is an overlap. */
function enter(session: string): void {
  const path = join(config.dir, `${session}.running`);
  try {
    closeSync(openSync(path, 'wx'));
  } catch {
    const holder = Number(readFileSync(path, 'utf8') || '0');
    if (holder !== process.pid && holder !== 0 && alive(holder)) journal(`overlap ${session} ${holder}`);
  }
  writeFileSync(path, String(process.pid));
}

function leave(session: string): void {
  try {
    unlinkSync(join(config.dir, `${session}.running`));
  } catch {
    /* already gone */
  }
}

const jobStep = defineTool({
  name: 'job_step',
  description: 'A step of a job with a side effect (never replayed).',
  parameters: z.object({ session: z.string(), call: z.string() }),
  execute: async ({ session, call }, ctx) => {
    enter(session);
    journal(`start ${session} ${call}`);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 20 + Math.floor(Math.random() * 40));
      ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    journal(`end ${session} ${call}`);
    leave(session);
    return `${call} done`;
  },
});

/** Two turns of steps, then the answer. */
const modelFor = (session: string) =>
  scriptedModel(
    (request) => {
      const turns = request.messages.filter((m) => m.role === 'assistant').length;
      const call = (id: string) => ({ id: `${session}-${id}`, name: 'job_step', arguments: { session, call: id } });
      if (turns === 0) return { toolCalls: [call('a'), call('b')] };
      if (turns === 1) return { toolCalls: [call('c')] };
      return { text: `Job ${session} done.` };
    },
    { recordRequests: false },
  );

/**
 * Every session was seeded with its job as a queued follow-up; a worker continues each one it can.
 * `continue()` decides under the session's lease, on the session as stored: a session another
 * worker finished answers NothingToContinue, one that another worker runs answers SessionBusy, and
 * one a killed worker left mid-run is resumed when it is loaded (its owner's process is gone).
 */
async function main(): Promise<void> {
  const store = postgresStore({ connectionString: config.connectionString });
  const ids = Array.from({ length: config.sessions }, (_, i) => `job-${i}`);
  const finished = new Set<string>();
  while (finished.size < ids.length) {
    const open = ids.filter((id) => !finished.has(id));
    // Workers start at different places, so they rarely ask for the same session.
    const start = Math.floor(Math.random() * open.length);
    for (const session of [...open.slice(start), ...open.slice(0, start)]) {
      const agent = createAgent({
        model: modelFor(session),
        tools: [jobStep],
        toolExecution: 'sequential',
        store,
        sessionId: session,
        lease: { ttlMs: config.ttlMs },
      });
      try {
        const { resumedRun } = await agent.ready;
        if (resumedRun) {
          journal(`resume ${session}`);
          await resumedRun.result;
        }
        await agent.continue().result;
      } catch (error) {
        if (!(error instanceof AgentError)) throw error;
        if (error.code === 'NothingToContinue') finished.add(session);
        else if (error.code !== 'SessionBusy' && error.code !== 'AlreadyRunning') throw error;
      }
      await agent.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await store.close();
}

runAsProcess(main);
