// Reading what the workers recorded (test/restate/support/worker.ts) and checking a run's events.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { AgentEvent, Message, RunResult } from 'agentchart';
import { checkInvariants } from 'agentchart/testing';
import { waitUntil, type RestateServer } from './restate-server.js';

function rawLines(logDir: string, sessionId: string): string[] {
  const file = join(logDir, `${sessionId}.log`);
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** The session's recorded lines without the pid: `model 0`, `tool-start w1 crash-1:w1`, … */
export function recordedLines(logDir: string, sessionId: string): string[] {
  return rawLines(logDir, sessionId).map((line) => line.slice(0, line.lastIndexOf(' ')));
}

/** The pids of the worker processes that recorded something for the session. */
export function recordedPids(logDir: string, sessionId: string): string[] {
  return rawLines(logDir, sessionId).map((line) => line.slice(line.lastIndexOf(' ') + 1));
}

export function countLines(logDir: string, sessionId: string, prefix: string): number {
  return recordedLines(logDir, sessionId).filter((line) => line === prefix || line.startsWith(`${prefix} `)).length;
}

export async function waitForLine(logDir: string, sessionId: string, prefix: string, times = 1): Promise<void> {
  await waitUntil(`"${prefix}" in ${sessionId}'s log`, async () => countLines(logDir, sessionId, prefix) >= times);
}

export async function readEvents(server: RestateServer, sessionId: string, afterSeq = -1): Promise<AgentEvent[]> {
  const answer = await server.call<AgentEvent[]>('Agent', sessionId, 'events', { afterSeq });
  expect(answer.status).toBe(200);
  return answer.body;
}

/**
 * The session's events as stored: per run seq 0…n−1 without a gap (also across worker crashes),
 * `runs` runs, every event-log invariant against the stored history, the last agentEnd's
 * counters and status equal to the result's. Returns the last run's events.
 */
export async function expectParity(
  server: RestateServer,
  sessionId: string,
  result: RunResult,
  runs = 1,
): Promise<AgentEvent[]> {
  const events = await readEvents(server, sessionId);
  const messages = (await server.call<Message[]>('Agent', sessionId, 'messages')).body;
  const runIds = [...new Set(events.map((event) => event.runId))];
  expect(runIds).toHaveLength(runs);
  for (const runId of runIds) {
    const seqs = events.filter((event) => event.runId === runId).map((event) => event.seq);
    expect(seqs).toEqual(seqs.map((_, index) => index));
  }
  const report = checkInvariants(events, messages);
  expect(report.violations).toEqual([]);
  expect(messages).toEqual(result.messages);
  const last = events.filter((event) => event.runId === runIds.at(-1));
  const end = last.at(-1);
  expect(end?.type).toBe('agentEnd');
  if (end?.type === 'agentEnd') {
    expect(end.counters).toEqual(result.counters);
    expect(end.status).toBe(result.status);
  }
  return last;
}
