import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { AgentError, createAgent, defineTool } from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';

/** What a session that fills its disk leaves: the run's end, the tools that ran, flush() and what still loads. */
export interface DiskFullReport {
  status: string;
  endReason: string;
  error: { code: string; message: string } | undefined;
  toolsRun: number;
  flush: string;
  firstMessage: unknown;
}

/** Runs a session whose tool results (200 kB each, 20 calls) cannot all fit in `dir`, on SQLite. */
export async function fillTheDisk(dir: string): Promise<DiskFullReport> {
  mkdirSync(dir, { recursive: true });
  const store = sqliteStore(join(dir, 'sessions.db'));
  let toolsRun = 0;
  const big = defineTool({
    name: 'work',
    description: 'Returns a lot',
    parameters: z.object({ id: z.string() }),
    execute: ({ id }) => ((toolsRun += 1), `${id}:${'x'.repeat(200_000)}`),
  });
  const model = scriptedModel(
    (_request, call) =>
      call < 20 ? { toolCalls: [{ id: `c${call}`, name: 'work', arguments: { id: `c${call}` } }] } : { text: 'done' },
    { recordRequests: false },
  );
  const agent = createAgent({ model, tools: [big], store, sessionId: 's', replayBuffer: 0 });
  await agent.ready;
  const result = await agent.prompt('fill the disk').result;
  const flush = await agent.flush().then(
    () => 'resolved',
    (error: unknown) => (error instanceof AgentError ? `AgentError ${error.code}` : String(error)),
  );
  const firstMessage = (await store.load('s'))?.history[0];
  store.close();
  return { status: result.status, endReason: result.endReason, error: result.error, toolsRun, flush, firstMessage };
}
