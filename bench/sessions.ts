import { createAgent, type RunResult } from 'agentchart';
import type { ScriptedModel } from 'agentchart/testing';
import { handLoop } from './hand-loop.js';
import type { Implementation } from './drivers.js';
import { fullGc, liveBytes, macrotask, MB, median, rssBytes, sampled, type Sampled } from './stats.js';
import { benchTools, stalledModel } from './workload.js';

/**
 * Many concurrent idle sessions: each prompted, its model call stalled (open until aborted).
 * Memory per session is taken after a full GC once every session is waiting on its model; then
 * every session is aborted and each run must end `aborted`, and the memory must come back.
 */

export interface SessionsRound {
  /** Live JS memory (heap + external) held by the sessions, bytes per session. */
  liveBytesPerSession: number;
  rssBytesPerSession: number;
  /** Creating and prompting one session until its model call is open, µs. */
  startUs: number;
  /** Aborting one session until its run result resolved, µs. */
  abortUs: number;
  /** Live memory still held after the sessions ended and were dropped, bytes per session. */
  retainedBytesPerSession: number;
  aborted: number;
  notAborted: number;
}

interface Session {
  model: ScriptedModel;
  abort(): void;
  result: Promise<{ status: string; endReason: string; running: () => boolean }>;
}

function startSession(implementation: Implementation): Session {
  const model = stalledModel();
  if (implementation === 'hand') {
    const controller = new AbortController();
    const result = handLoop('hello', { model, tools: benchTools, signal: controller.signal }).then((r) => ({
      status: r.status,
      endReason: r.status === 'aborted' ? 'aborted' : 'naturalEnd',
      running: () => false,
    }));
    return { model, abort: () => controller.abort(), result };
  }
  const agent = createAgent({ model, tools: benchTools });
  const run = agent.prompt('hello');
  const result = run.result.then((r: RunResult) => ({
    status: r.status,
    endReason: r.endReason,
    running: () => agent.running,
  }));
  return { model, abort: () => agent.abort(), result };
}

async function allModelCallsOpen(sessions: readonly Session[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let waitingFrom = 0;
  for (;;) {
    while (waitingFrom < sessions.length && (sessions[waitingFrom] as Session).model.calls > 0) waitingFrom++;
    if (waitingFrom === sessions.length) return;
    if (performance.now() > deadline)
      throw new Error(`bench sessions: only ${waitingFrom} of ${sessions.length} sessions reached their model call`);
    await macrotask();
  }
}

export async function sessionsRound(
  implementation: Implementation,
  count: number,
  samplePeak: () => void,
): Promise<SessionsRound> {
  await fullGc();
  const baseLive = liveBytes();
  const baseRss = rssBytes();
  let sessions: Session[] = [];
  const startedAt = performance.now();
  for (let i = 0; i < count; i++) sessions.push(startSession(implementation));
  await allModelCallsOpen(sessions, 60_000);
  const startUs = ((performance.now() - startedAt) * 1000) / count;
  await fullGc();
  const live = liveBytes() - baseLive;
  const rss = rssBytes() - baseRss;
  samplePeak();

  const abortedAt = performance.now();
  for (const session of sessions) session.abort();
  const outcomes = await Promise.all(sessions.map((session) => session.result));
  const abortUs = ((performance.now() - abortedAt) * 1000) / count;
  const aborted = outcomes.filter((o) => o.status === 'aborted' && o.endReason === 'aborted' && !o.running()).length;

  sessions = [];
  outcomes.length = 0;
  await fullGc();
  const retained = liveBytes() - baseLive;
  return {
    liveBytesPerSession: live / count,
    rssBytesPerSession: rss / count,
    startUs,
    abortUs,
    retainedBytesPerSession: retained / count,
    aborted,
    notAborted: count - aborted,
  };
}

export interface SessionsResult {
  sessions: number;
  /** Live memory of all sessions together, MB (median over rounds). */
  totalLiveMB: Record<Implementation, number>;
  liveKBPerSession: Record<Implementation, Sampled>;
  rssKBPerSession: Record<Implementation, Sampled>;
  startUs: Record<Implementation, Sampled>;
  abortUs: Record<Implementation, Sampled>;
  retainedKBPerSession: Record<Implementation, Sampled>;
  /** Every run of every round ended `aborted` (and the agent is no longer running). */
  allAborted: boolean;
  notAborted: number;
}

export async function sessionsBenchmark(
  count: number,
  rounds: number,
  samplePeak: () => void,
): Promise<SessionsResult> {
  const byImpl: Record<Implementation, SessionsRound[]> = { agentchart: [], hand: [] };
  for (let round = 0; round < rounds; round++) {
    const order: Implementation[] = round % 2 === 0 ? ['agentchart', 'hand'] : ['hand', 'agentchart'];
    for (const implementation of order)
      byImpl[implementation].push(await sessionsRound(implementation, count, samplePeak));
  }
  const kb = (implementation: Implementation, pick: (r: SessionsRound) => number) =>
    sampled(byImpl[implementation].map((r) => pick(r) / 1024));
  const us = (implementation: Implementation, pick: (r: SessionsRound) => number) =>
    sampled(byImpl[implementation].map(pick));
  const both = <T>(f: (implementation: Implementation) => T): Record<Implementation, T> => ({
    agentchart: f('agentchart'),
    hand: f('hand'),
  });
  const notAborted = [...byImpl.agentchart, ...byImpl.hand].reduce((sum, r) => sum + r.notAborted, 0);
  return {
    sessions: count,
    totalLiveMB: both((i) => Number(((median(byImpl[i].map((r) => r.liveBytesPerSession)) * count) / MB).toFixed(1))),
    liveKBPerSession: both((i) => kb(i, (r) => r.liveBytesPerSession)),
    rssKBPerSession: both((i) => kb(i, (r) => r.rssBytesPerSession)),
    startUs: both((i) => us(i, (r) => r.startUs)),
    abortUs: both((i) => us(i, (r) => r.abortUs)),
    retainedKBPerSession: both((i) => kb(i, (r) => r.retainedBytesPerSession)),
    allAborted: notAborted === 0,
    notAborted,
  };
}
