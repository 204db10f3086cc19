// One web request's process in the batch-approval test: the starter prompts and its run parks with three
// calls waiting (the process stays up); each approver, another process, answers one of them.
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { AgentError, createAgent, defineTool, type AgentEvent, type PendingApproval } from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';
import { runAsProcess } from '../support/processes.js';

export interface BatchApprovalConfig {
  db: string;
  role: 'starter' | 'approver';
  /** Lines `deploy <region> <pid>` per run of the tool. */
  journal: string;
  /** The approver's answer: the region whose call it answers; `versionOffset` quotes another version. */
  answer?: { region: string; approved: boolean; versionOffset?: number };
}

export interface BatchApprovalReport {
  role: BatchApprovalConfig['role'];
  pid?: number;
  parked?: PendingApproval[];
  pending?: PendingApproval[];
  refused?: { code: string; message: string };
  /** What the approver's subscriber got from the run it continued, up to its park or its end. */
  events?: Array<AgentEvent['type']>;
  /** Still waiting once this answer was stored (the run parked again). */
  after?: PendingApproval[];
  result?: { status: string; endReason: string };
}

const REGIONS = ['eu', 'us', 'ap'];
const config = JSON.parse(process.env.AGENTCHART_BATCH_APPROVAL ?? '{}') as BatchApprovalConfig;
const print = (report: BatchApprovalReport) => console.log(JSON.stringify({ ...report, pid: process.pid }));

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys to a region (needs approval).',
  parameters: z.object({ region: z.string() }),
  requiresApproval: true,
  execute: ({ region }) => (
    appendFileSync(config.journal, `deploy ${region} ${process.pid}\n`),
    `deployed to ${region}`
  ),
});

const model = scriptedModel(
  (request) =>
    request.messages.some((m) => m.role === 'toolResult')
      ? { text: 'Released where approved.' }
      : { toolCalls: REGIONS.map((region, i) => ({ id: `d${i}`, name: 'deploy', arguments: { region } })) },
  { recordRequests: false },
);

async function main(): Promise<void> {
  const store = sqliteStore(config.db);
  const agent = createAgent({ model, tools: [deploy], store, sessionId: 'web', lease: { ttlMs: 600 } });
  const { resumedRun } = await agent.ready;
  if (resumedRun) throw new Error('loading the session resumed a run');
  // The run let its lease go (it parked): another owner can take the session.
  const parked = async () => {
    for (;;) {
      try {
        return void (await store.release('web', await store.acquire('web', 'probe', 1_000)));
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  };
  if (config.role === 'starter') {
    const server = setInterval(() => {}, 1_000);
    const run = agent.prompt('Release to every region.');
    let requested = 0;
    run.events.subscribe((event) => {
      if (event.type === 'toolApprovalRequested' && ++requested === REGIONS.length)
        void parked().then(() => print({ role: 'starter', parked: agent.pendingApprovals() }));
    });
    const result = await run.result;
    print({ role: 'starter', result: { status: result.status, endReason: result.endReason } });
    clearInterval(server);
    await store.close();
    return;
  }
  const pending = agent.pendingApprovals();
  const answer = config.answer;
  const approval = pending.find((waiting) => waiting.arguments.region === answer?.region);
  if (!answer || !approval) throw new Error(`no approval pending for ${answer?.region ?? '-'}`);
  const decision = answer.approved ? { approved: true as const } : { approved: false as const, reason: 'not today' };
  try {
    const run = agent.resolveApproval(approval.toolCallId, decision, {
      version: approval.version + (answer.versionOffset ?? 0),
    });
    const events: Array<AgentEvent['type']> = [];
    run.events.subscribe((event) => events.push(event.type));
    if (pending.length > 1) {
      // Others still wait: once this answer is stored the run parks again.
      await parked();
      print({ role: 'approver', pending, events, after: agent.pendingApprovals() });
    } else {
      const result = await run.result;
      print({ role: 'approver', pending, events, result: { status: result.status, endReason: result.endReason } });
    }
  } catch (error) {
    if (!(error instanceof AgentError)) throw error;
    print({ role: 'approver', pending, refused: { code: error.code, message: error.message } });
  }
  await agent.close();
  await store.close();
}

runAsProcess(main);
