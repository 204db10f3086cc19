import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentEvent, Message } from 'agentchart';
import { spawnChild } from '../support/processes.js';
import type { ChildConfig } from './session-child.js';

export { inPool, lastJson, lines as journalLines } from '../support/processes.js';

/** Where the crash test kills its sessions (its count is a README figure: `npm run figures`). */
export const KILL_POINTS: Array<{ name: string; killAfterStep?: number; killInStream?: number }> = [
  { name: 'during the first model stream', killInStream: 0 },
  { name: 'during the deploy model stream (after the retry)', killInStream: 2 },
  // The session commits 13 steps (one per actor step that changed something): every boundary between
  // them but step 11, which stores the deploy call's start before it runs (a 'never' tool is then
  // not re-run, by design, and this test counts one deploy).
  ...[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12].map((step) => ({ name: `after committed step ${step}`, killAfterStep: step })),
];

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the session child with `node --import tsx` and the config in its environment. */
export function runChild(config: ChildConfig): Promise<ChildExit> {
  return spawnChild(new URL('./session-child.ts', import.meta.url), 'AGENTCHART_CHILD', config, 30_000).exited;
}

export function freshSession(): Pick<ChildConfig, 'db' | 'sessionId' | 'journal'> {
  const dir = mkdtempSync(join(tmpdir(), 'agentchart-durable-'));
  return { db: join(dir, 'sessions.db'), sessionId: 'session-1', journal: join(dir, 'journal.txt') };
}

export type SessionReport = {
  events: AgentEvent[];
  history: Message[];
  resumed: boolean;
  /** SessionBusy answers before the session loaded (a restart on the same host gets none). */
  refusals: number;
  /** From creating the agent to the session loaded (a resumed run under way), and from the process's start. */
  readyMs: number;
  sinceStartMs: number;
};
