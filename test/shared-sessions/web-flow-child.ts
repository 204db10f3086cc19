// One web request's process in the web-flow test: the starter prompts and its run parks at a durable
// approval (the process stays up, as a server would); the approver, another process, lists the
// approval and answers it, then follows the rest of the run.
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { AgentError, createAgent, defineTool, type AgentEvent, type PendingApproval } from 'agentchart';
import { postgresStore } from 'agentchart/postgres';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';
import { runAsProcess } from '../support/processes.js';

export interface WebFlowConfig {
  db: string;
  /** A Postgres database instead of the SQLite file `db`. */
  postgres?: string;
  role: 'starter' | 'approver';
  /** Lines `deploy <target> <pid>` per run of the tool. */
  journal: string;
  /** The approver's answer; `versionOffset` quotes a version that is not the pending one. */
  answer?: { approved: boolean; versionOffset?: number };
}

export interface WebFlowReport {
  role: WebFlowConfig['role'];
  pid?: number;
  parked?: PendingApproval[];
  pending?: PendingApproval[];
  refused?: { code: string; message: string };
  /** What the approver's subscriber got from the run it continued. */
  events?: Array<AgentEvent['type']>;
  runId?: string;
  result?: { status: string; endReason: string };
}

const config = JSON.parse(process.env.AGENTCHART_WEB_FLOW ?? '{}') as WebFlowConfig;
const print = (report: WebFlowReport) => console.log(JSON.stringify({ ...report, pid: process.pid }));

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys (needs approval).',
  parameters: z.object({ target: z.string() }),
  requiresApproval: true,
  execute: ({ target }) => (
    appendFileSync(config.journal, `deploy ${target} ${process.pid}\n`),
    `deployed to ${target}`
  ),
});

const model = scriptedModel(
  (request) => {
    const result = request.messages.find((m) => m.role === 'toolResult');
    if (!result)
      return { text: 'Deploying.', toolCalls: [{ id: 'd1', name: 'deploy', arguments: { target: 'prod' } }] };
    return { text: result.role === 'toolResult' && result.isError ? 'Not deployed.' : 'Prod is live.' };
  },
  { recordRequests: false },
);

async function main(): Promise<void> {
  const store = config.postgres ? postgresStore({ connectionString: config.postgres }) : sqliteStore(config.db);
  // A short lease: a parked run checks every third of it whether another process moved it on.
  const agent = createAgent({ model, tools: [deploy], store, sessionId: 'web', lease: { ttlMs: 600 } });
  const { resumedRun } = await agent.ready;
  if (resumedRun) throw new Error('loading the session resumed a run');
  if (config.role === 'starter') {
    // A server stays up (its listening socket); a parked run's watch alone keeps no process alive.
    const server = setInterval(() => {}, 1_000);
    const run = agent.prompt('Deploy to prod.');
    run.events.subscribe((event) => {
      if (event.type === 'toolApprovalRequested') print({ role: 'starter', parked: agent.pendingApprovals() });
    });
    // The request that started the run: told, once another process answered, that its run moved on.
    const result = await run.result;
    print({ role: 'starter', result: { status: result.status, endReason: result.endReason } });
    clearInterval(server);
    await store.close();
    return;
  }
  const pending = agent.pendingApprovals();
  const [approval] = pending;
  if (!approval || !config.answer) throw new Error('no approval pending');
  const decision = config.answer.approved
    ? { approved: true as const }
    : { approved: false as const, reason: 'not today' };
  try {
    const run = agent.resolveApproval(approval.toolCallId, decision, {
      version: approval.version + (config.answer.versionOffset ?? 0),
    });
    const events: Array<AgentEvent['type']> = [];
    run.events.subscribe((event) => events.push(event.type));
    const result = await run.result;
    print({
      role: 'approver',
      pending,
      events,
      runId: run.runId,
      result: { status: result.status, endReason: result.endReason },
    });
  } catch (error) {
    if (!(error instanceof AgentError)) throw error;
    print({ role: 'approver', pending, refused: { code: error.code, message: error.message } });
  }
  await agent.close();
  await store.close();
}

runAsProcess(main);
