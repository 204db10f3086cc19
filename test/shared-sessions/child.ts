// One process on a shared session (one owner per session), run by the shared-session tests: the owner that
// starts it, a contender that must be refused, or a resumer that takes over once the lease lapsed.
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { AgentError, createAgent, defineTool, type AgentEvent, type SessionStore } from 'agentchart';
import { postgresStore } from 'agentchart/postgres';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';
import { runAsProcess } from '../support/processes.js';

export interface SharedChildConfig {
  store: { kind: 'sqlite'; path: string } | { kind: 'postgres'; connectionString: string };
  sessionId: string;
  mode: 'owner' | 'contender' | 'resumer';
  /** Side effects, one line each: `start <call> <pid>`, `end <call> <pid>`, `steer <pid>`. */
  journal: string;
  ttlMs: number;
  /** How long the first step holds (ms). */
  holdMs: number;
  /** The host identity the owner's lease records (default: this machine's): another host's lease waits for its ttl. */
  host?: string;
}

export interface ChildReport {
  pid: number;
  busy?: { code: string; message: string };
  result?: { status: string; endReason: string; error?: { code: string; message: string } };
  events?: AgentEvent[];
  history?: unknown[];
  /** The resumer: SessionBusy answers before it took the session over, and how long that took. */
  refusals?: number;
  takeoverMs?: number;
  /** When the session was taken over (ms since the epoch). */
  takenOverAt?: number;
}

const config = JSON.parse(process.env.AGENTCHART_SHARED ?? '{}') as SharedChildConfig;
const journal = (line: string) => appendFileSync(config.journal, `${line} ${process.pid}\n`);
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

const step = defineTool({
  name: 'step',
  description: 'A step with a side effect (never replayed after a crash).',
  parameters: z.object({ id: z.string() }),
  execute: async ({ id }, ctx) => {
    journal(`start ${id}`);
    await sleep(id === 'n1' ? config.holdMs : 30, ctx.signal);
    journal(`end ${id}`);
    return `step ${id} done`;
  },
});

const model = scriptedModel(
  (request) =>
    request.messages.some((m) => m.role === 'assistant')
      ? { text: request.messages.at(-1)?.role === 'user' ? 'Noted the steering.' : 'All steps done.' }
      : {
          toolCalls: [
            { id: 'n1', name: 'step', arguments: { id: 'n1' } },
            { id: 'n2', name: 'step', arguments: { id: 'n2' } },
          ],
        },
  { recordRequests: false },
);

function openStore(): SessionStore & { close(): unknown } {
  return config.store.kind === 'sqlite'
    ? sqliteStore(config.store.path)
    : postgresStore({ connectionString: config.store.connectionString });
}

const agentOn = (store: SessionStore) =>
  createAgent({
    model,
    tools: [step],
    toolExecution: 'sequential',
    steeringInterrupts: false,
    store,
    sessionId: config.sessionId,
    lease: {
      ttlMs: config.ttlMs,
      owner: `${config.mode}-${process.pid}`,
      ...(config.mode === 'owner' && config.host ? { host: config.host } : {}),
    },
  });

const print = (report: Omit<ChildReport, 'pid'>) => console.log(JSON.stringify({ pid: process.pid, ...report }));

async function main(): Promise<void> {
  const store = openStore();
  if (config.mode === 'owner') {
    const agent = agentOn(store);
    await agent.ready;
    const run = agent.prompt('Run both steps.');
    let steered = false;
    run.events.subscribe((event) => {
      if (event.type !== 'toolExecutionStart' || steered) return;
      steered = true;
      void agent.steer('Also note the time.');
      // Accepted means persisted: once the step is written, the steering must survive anything.
      void agent.flush().then(() => journal('steer'));
    });
    const result = await run.result;
    print({
      result: { status: result.status, endReason: result.endReason, ...(result.error ? { error: result.error } : {}) },
    });
  } else if (config.mode === 'contender') {
    const agent = agentOn(store);
    try {
      await agent.ready;
      print({});
      await agent.close();
    } catch (error) {
      print({
        busy: { code: error instanceof AgentError ? error.code : 'unknown', message: (error as Error).message },
      });
    }
  } else {
    // A restarted worker: a dead owner on this host is taken over at once; another host's lease is
    // live until its ttl (refused meanwhile), then it takes the session over.
    const began = performance.now();
    let refusals = 0;
    for (;;) {
      const agent = agentOn(store);
      try {
        const { resumedRun } = await agent.ready;
        const takeoverMs = performance.now() - began;
        const takenOverAt = Date.now();
        const result = await resumedRun?.result;
        await agent.flush();
        await agent.close();
        const events = await store.loadEvents(config.sessionId);
        print({
          ...(result ? { result: { status: result.status, endReason: result.endReason } } : {}),
          events,
          history: [...agent.messages],
          refusals,
          takeoverMs,
          takenOverAt,
        });
        break;
      } catch (error) {
        if (!(error instanceof AgentError && error.code === 'SessionBusy')) throw error;
        refusals += 1;
        await new Promise((resolve) => setTimeout(resolve, config.ttlMs / 4));
      }
    }
  }
  await store.close();
}

runAsProcess(main);
