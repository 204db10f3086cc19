// A session run by the commit-order tests: killed with SIGKILL inside a post-turn policy, or by a
// subscriber the moment it receives a chosen event; then resumed by a fresh process.
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { createAgent, defineTool, type AgentEvent, type SessionStore } from 'agentchart';
import { postgresStore } from 'agentchart/postgres';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';
import { runAsProcess } from '../support/processes.js';

export interface CommitOrderConfig {
  store: { kind: 'sqlite'; path: string } | { kind: 'postgres'; connectionString: string };
  mode: 'start' | 'resume';
  /** Where the kill lands: inside a post-turn policy that blocks the process, or in a subscriber. */
  kill: { in: 'postTurnPolicy' } | { in: 'subscriber'; on: AgentEvent['type']; nth: number };
  /** Lines: `never <id>` per run of the 'never' tool, `policy`, `seen <event JSON>` per event a subscriber got. */
  journal: string;
  /** Live streaming: a stream's deltas (like progress updates) are ephemeral. */
  live?: boolean;
}

export interface CommitOrderReport {
  events: AgentEvent[];
  history: unknown[];
  status: string | null;
}

const config = JSON.parse(process.env.AGENTCHART_COMMIT_ORDER ?? '{}') as CommitOrderConfig;
const journal = (line: string) => appendFileSync(config.journal, `${line}\n`);

const write = defineTool({
  name: 'write',
  description: 'Writes a record (not safe to replay).',
  parameters: z.object({ id: z.string() }),
  execute: async ({ id }, ctx) => {
    journal(`never ${id}`);
    for (let part = 1; part <= 3; part++) {
      await ctx.update({ id, part });
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return `wrote ${id}`;
  },
});

const model = scriptedModel(
  (request) => {
    const results = request.messages.filter((m) => m.role === 'toolResult').length;
    if (results === 0)
      return {
        text: 'Writing record a, which takes a few words to say.',
        toolCalls: [{ id: 'a', name: 'write', arguments: { id: 'a' } }],
      };
    if (results === 1) return { text: 'Writing b.', toolCalls: [{ id: 'b', name: 'write', arguments: { id: 'b' } }] };
    return { text: 'Both written.' };
  },
  { recordRequests: false },
);

/** Blocks the process (a slow, synchronous post-turn policy): only a kill ends it. */
function blockForever(): never {
  journal('policy');
  for (;;) {
    // A busy loop: no timer, no I/O, no step boundary can run meanwhile.
  }
}

function openStore(): SessionStore & { close(): unknown } {
  return config.store.kind === 'sqlite'
    ? sqliteStore(config.store.path)
    : postgresStore({ connectionString: config.store.connectionString });
}

async function main(): Promise<void> {
  const store = openStore();
  const killInPolicy = config.mode === 'start' && config.kill.in === 'postTurnPolicy';
  const agent = createAgent({
    model,
    tools: [write],
    store,
    sessionId: 'order',
    ...(config.live ? { streaming: 'live' as const } : {}),
    policies: {
      postTurn: [
        ({ turnIndex }) => {
          if (killInPolicy && turnIndex === 0) blockForever();
          return { verdict: 'continue' };
        },
      ],
    },
  });
  const { resumedRun } = await agent.ready;
  if (config.mode === 'start') {
    const run = agent.prompt('Write a and b.');
    let received = 0;
    run.events.subscribe((event) => {
      journal(`seen ${JSON.stringify(event)}`);
      const kill = config.kill;
      if (kill.in === 'subscriber' && event.type === kill.on && ++received === kill.nth)
        process.kill(process.pid, 'SIGKILL');
    });
    await run.result;
  }
  const result = await resumedRun?.result;
  await agent.flush();
  const report: CommitOrderReport = {
    events: await store.loadEvents('order'),
    history: [...agent.messages],
    status: result?.status ?? null,
  };
  console.log(JSON.stringify(report));
  await agent.close();
  await store.close();
}

runAsProcess(main);
