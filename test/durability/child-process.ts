import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentEvent, Message } from 'agentchart';
import { spawnChild } from '../support/processes.js';
import type { ChildConfig } from './session-child.js';

export { inPool, lastJson, lines as journalLines } from '../support/processes.js';

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
