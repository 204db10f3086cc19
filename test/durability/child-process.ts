import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentEvent, Message } from 'agentchart';
import type { ChildConfig } from './session-child.js';

const CHILD = fileURLToPath(new URL('./session-child.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the session child with `node --import tsx` and the config in its environment. */
export function runChild(config: ChildConfig): Promise<ChildExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      cwd: ROOT,
      env: { ...process.env, AGENTCHART_CHILD: JSON.stringify(config) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export function freshSession(): Pick<ChildConfig, 'db' | 'sessionId' | 'journal'> {
  const dir = mkdtempSync(join(tmpdir(), 'agentchart-durable-'));
  return { db: join(dir, 'sessions.db'), sessionId: 'session-1', journal: join(dir, 'journal.txt') };
}

export function journalLines(path: string): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
}

export function lastJson<T>(stdout: string): T {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as T;
}

export type SessionReport = { events: AgentEvent[]; history: Message[]; resumed: boolean };

/** Runs tasks with at most `limit` in flight (2 cores: each child is a whole Node process). */
export async function inPool<T, R>(items: T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
