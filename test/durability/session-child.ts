// A session run in a child process by the durability tests: started, killed with SIGKILL at a
// chosen step, then resumed by a fresh process on the same SQLite file or Postgres database.
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import {
  AgentError,
  createAgent,
  type Agent,
  defineTool,
  type AgentEvent,
  type AgentRun,
  type Message,
  type SessionStore,
} from 'agentchart';
import { postgresStore } from 'agentchart/postgres';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel, type ScriptEntry } from 'agentchart/testing';

export interface ChildConfig {
  db: string;
  /** A Postgres database instead of the SQLite file `db`. */
  postgres?: string;
  sessionId: string;
  mode: 'start' | 'resume';
  /** SIGKILL right after this many committed steps. */
  killAfterStep?: number;
  /** SIGKILL in the middle of this model call's stream (0-based, per process). */
  killInStream?: number;
  /** Appends a line per tool run and per accepted steering message. */
  journal: string;
  approvals: 'auto' | 'durable';
  /** Resume mode with durable approvals: the decision to give. */
  approve?: { toolCallId?: string; version?: number; approved: boolean };
}

const config = JSON.parse(process.env.AGENTCHART_CHILD ?? '{}') as ChildConfig;
const journal = (line: string) => appendFileSync(config.journal, `${line}\n`);

/** The store, with a SIGKILL right after the chosen committed step (synchronously, at the boundary). */
function killingStore(store: SessionStore): SessionStore {
  let steps = 0;
  const committed = () => {
    steps += 1;
    if (steps === config.killAfterStep) process.kill(process.pid, 'SIGKILL');
  };
  const { commitStepSync } = store;
  if (!commitStepSync) {
    return { ...store, commitStep: async (sessionId, step) => (await store.commitStep(sessionId, step), committed()) };
  }
  const sync: NonNullable<SessionStore['commitStepSync']> = (sessionId, step) => {
    commitStepSync(sessionId, step);
    committed();
  };
  return { ...store, commitStepSync: sync, commitStep: async (sessionId, step) => sync(sessionId, step) };
}

/** The agent on the session (the model kills the process from inside its stream once its steps are stored). */
let current: Agent | null = null;

const assistants = (messages: Message[]) => messages.filter((m) => m.role === 'assistant').length;
let rateLimited = false;
let calls = 0;
const model = scriptedModel(
  (request): ScriptEntry => {
    const call = calls++;
    const stepsDone = assistants(request.messages);
    const entry: ScriptEntry =
      stepsDone === 0
        ? {
            text: 'Writing the log and fetching the page.',
            toolCalls: [
              { id: 'w1', name: 'write_log', arguments: { line: 'a' } },
              { id: 'f1', name: 'fetch', arguments: { url: 'x' } },
            ],
          }
        : stepsDone === 1 && !rateLimited
          ? ((rateLimited = true), { text: 'partial', error: { kind: 'rateLimit', retryAfterMs: 20 } })
          : stepsDone === 1
            ? { text: 'Deploying.', toolCalls: [{ id: 'd1', name: 'deploy', arguments: { target: 'prod' } }] }
            : { text: 'All done.' };
    if (call === config.killInStream) {
      // The stream has started (beforeModelCall is out) and stays open: the process dies inside it, once
      // the step before it is stored (a server store's write may still be on its way when the stream starts).
      setTimeout(() => void current?.flush().finally(() => process.kill(process.pid, 'SIGKILL')), 5);
      return { ...entry, stall: true };
    }
    return entry;
  },
  { recordRequests: false },
);

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

const tools = [
  defineTool({
    name: 'write_log',
    description: 'Appends a line to the log (not safe to replay).',
    parameters: z.object({ line: z.string() }),
    execute: async ({ line }, ctx) => {
      journal(`never:${ctx.toolCallId}`);
      await sleep(40, ctx.signal);
      return `wrote ${line}`;
    },
  }),
  defineTool({
    name: 'fetch',
    description: 'Fetches a page (safe to replay).',
    parameters: z.object({ url: z.string() }),
    replay: 'safe',
    execute: async ({ url }, ctx) => {
      journal(`safe:${ctx.toolCallId}`);
      await sleep(20, ctx.signal);
      return `fetched ${url}`;
    },
  }),
  defineTool({
    name: 'deploy',
    description: 'Deploys (needs approval).',
    parameters: z.object({ target: z.string() }),
    requiresApproval: true,
    execute: async ({ target }, ctx) => {
      journal(`deploy:${ctx.toolCallId}`);
      return `deployed to ${target}`;
    },
  }),
];

/**
 * The agent on the session, as a supervisor restarting a worker would get it, with the default
 * lease (30 s). The killed process ran on this host: its lease is taken over at once. A refusal
 * (SessionBusy) is counted and retried, so the test can tell it never happened.
 */
async function readyAgent(store: SessionStore) {
  const began = performance.now();
  let refusals = 0;
  for (;;) {
    const agent = (current = createAgent({
      model,
      tools,
      store,
      sessionId: config.sessionId,
      steeringInterrupts: false,
      retry: { jitter: false },
      ...(config.approvals === 'auto' ? { approval: async () => ({ approved: true as const }) } : {}),
    }));
    try {
      const ready = await agent.ready;
      const readyAt = performance.now();
      return { agent, ...ready, refusals, readyMs: readyAt - began, readyAt };
    } catch (error) {
      if (!(error instanceof AgentError && error.code === 'SessionBusy')) throw error;
      refusals += 1;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function main(): Promise<void> {
  const raw = config.postgres ? postgresStore({ connectionString: config.postgres }) : sqliteStore(config.db);
  const store = killingStore(raw);
  const { agent, resumedRun, refusals, readyMs, readyAt } = await readyAgent(store);
  if (config.mode === 'start') {
    const run = agent.prompt('Ship it.');
    let steered = false;
    run.events.subscribe((event: AgentEvent) => {
      if (event.type === 'toolExecutionStart' && !steered) {
        steered = true;
        void agent.steer('Also mention the changelog.');
        // Stored at once on SQLite; a server store's write is on its way until flush() resolves.
        if (config.postgres) void agent.flush().then(() => journal('steer-accepted'));
        else journal('steer-accepted');
      }
      if (event.type === 'toolApprovalRequested' && config.approvals === 'durable') {
        void agent.flush().then(async () => {
          const pending = agent.pendingApprovals();
          // Lets the session go without ending the run: the next process answers the approval.
          await agent.close();
          console.log(JSON.stringify({ pending }));
          process.exit(0);
        });
      }
    });
    await run.result;
  } else if (config.approve) {
    // The run parked at its approval: loading leaves it so, the answer continues it here.
    if (resumedRun) throw new Error('a run parked at a durable approval was resumed by loading the session');
    const [pending] = agent.pendingApprovals();
    let continued: AgentRun;
    try {
      continued = agent.resolveApproval(
        config.approve.toolCallId ?? pending?.toolCallId ?? '',
        config.approve.approved ? { approved: true } : { approved: false, reason: 'declined after restart' },
        { version: config.approve.version ?? pending?.version ?? -1 },
      );
    } catch (error) {
      await agent.close();
      console.log(JSON.stringify({ error: error instanceof AgentError ? error.code : String(error) }));
      process.exit(0);
    }
    await continued.result;
  } else {
    await resumedRun?.result;
  }
  await agent.flush();
  await agent.close();
  console.log(
    JSON.stringify({
      events: await raw.loadEvents(config.sessionId),
      history: agent.messages,
      resumed: resumedRun !== null,
      refusals,
      readyMs,
      // From this process's start (module loading included) to the resumed run under way.
      sinceStartMs: readyAt,
    }),
  );
  await raw.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
