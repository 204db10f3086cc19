import { writeFileSync } from 'node:fs';
import { Session as InspectorSession } from 'node:inspector/promises';
import { createAgent, defineTool, type AnyTool } from 'agentchart';
import { scriptedModel, type ScriptEntry } from 'agentchart/testing';
import type { AgentTool } from '@mariozechner/pi-agent-core';
import { Type } from '@mariozechner/pi-ai';
import { z } from 'zod';
import { piAgent, piWorkDone } from './pi-driver.js';
import { replayModel } from './replay-model.js';
import { fullGc, MB, peakRssBytes, round2, rssBytes, startClock } from './stats.js';
import type { ReplyScript, WorkDone } from './workload.js';

/**
 * The load scenario, in a process of its own (bench/load-scenario.ts starts it): N sessions at
 * once, each T turns of K tool calls whose bodies wait 1–5 ms on a timer, then an answer, with a
 * subscriber counting every event. agentchart and pi are fed the same ready-made events by their
 * replay models; `scripted` runs agentchart on `scriptedModel` with its defaults (every request
 * recorded), to show what that costs. Prints one JSON line: wall and CPU time, peak RSS, the heap
 * at its peak and after the sessions are dropped, and the work done.
 *
 * With `--heap-live=<file>` it also writes a sampling heap profile of the objects alive when the
 * first session ends (every session is then near its end: the live set at its largest), for
 * bench/where-time-goes.ts; with `--cpu=<file>`, a CPU profile of the sessions' span (the warm-up left out).
 *
 *   npx tsx bench/load.ts <agentchart|pi|scripted> <sessions> [turns] [tools] [--heap-live=<file>] [--cpu=<file>]
 */

export type LoadLibrary = 'agentchart' | 'pi' | 'scripted';

export interface LoadRun {
  library: LoadLibrary;
  sessions: number;
  turns: number;
  tools: number;
  wallMs: number;
  cpuMs: number;
  /** The process's peak RSS (the kernel's high-water mark), and its RSS before the sessions started. */
  peakRssMB: number;
  baselineRssMB: number;
  /** Heap used, sampled every 50 ms while the sessions ran. */
  peakHeapMB: number;
  /** Heap used after every session ended and was dropped, after a full GC: the sessions left nothing behind. */
  heapAfterMB: number;
  heapBeforeMB: number;
  completed: number;
  /** Events a subscriber saw, per session (median). */
  eventsPerSession: number;
}

/** How long call `call` of turn `turn` of session `session` waits: 1–5 ms, the same for every library. */
const waitMs = (session: number, turn: number, call: number) => 1 + ((session * 7 + turn * 3 + call) % 5);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Session `session`'s replies: `turns` turns of `tools` waits, then a short answer. */
export function script(session: number, turns: number, tools: number): ReplyScript {
  return (callIndex) => {
    if (callIndex > turns) return undefined;
    if (callIndex === turns) return { text: ['All', ' done', '.'], toolCalls: [] };
    const toolCalls = Array.from({ length: tools }, (_, call) => ({
      name: 'wait',
      arguments: { ms: waitMs(session, callIndex, call) },
    }));
    return { text: [], toolCalls };
  };
}

export const waitTool = defineTool({
  name: 'wait',
  description: 'Waits a few milliseconds.',
  parameters: z.object({ ms: z.number() }),
  execute: async ({ ms }) => {
    await sleep(ms);
    return 'waited';
  },
}) as unknown as AnyTool;

const piWaitTool: AgentTool = {
  name: 'wait',
  label: 'wait',
  description: 'Waits a few milliseconds.',
  parameters: Type.Object({ ms: Type.Number() }),
  execute: async (_id, params) => {
    await sleep((params as { ms: number }).ms);
    return { content: [{ type: 'text', text: 'waited' }], details: {} };
  },
};

interface Session {
  done: Promise<WorkDone>;
  events: () => number;
}

function startSession(library: LoadLibrary, index: number, turns: number, tools: number): Session {
  let events = 0;
  const count = () => void events++;
  if (library === 'pi') {
    const agent = piAgent(script(index, turns, tools), [piWaitTool]);
    agent.subscribe(count);
    return { done: agent.prompt('go').then(() => piWorkDone(agent)), events: () => events };
  }
  const model =
    library === 'agentchart'
      ? replayModel(script(index, turns, tools))
      : scriptedModel(scriptEntries(index, turns, tools));
  const run = createAgent({ model, tools: [waitTool] }).prompt('go');
  run.events.subscribe(count);
  const done = run.result.then((result) => ({
    status: result.status,
    turns: result.counters.turns,
    toolCallsExecuted: result.counters.toolCallsExecuted,
  }));
  return { done, events: () => events };
}

/** The same script as `scriptedModel` entries (the model's default options: every request recorded). */
function scriptEntries(session: number, turns: number, tools: number): ScriptEntry[] {
  const replies = script(session, turns, tools);
  return Array.from({ length: turns + 1 }, (_, callIndex) => {
    const reply = replies(callIndex);
    return reply?.toolCalls.length ? { toolCalls: [...reply.toolCalls] } : { text: reply?.text.join('') ?? '' };
  });
}

async function runSessions(
  library: LoadLibrary,
  count: number,
  turns: number,
  tools: number,
  whenFirstEnds: () => Promise<void> = () => Promise.resolve(),
) {
  const sessions = Array.from({ length: count }, (_, index) => startSession(library, index, turns, tools));
  await Promise.race(sessions.map((session) => session.done));
  await whenFirstEnds();
  const outcomes = await Promise.all(sessions.map((session) => session.done));
  const completed = outcomes.filter(
    (o) => o.status === 'completed' && o.turns === turns + 1 && o.toolCallsExecuted === turns * tools,
  ).length;
  const events = sessions.map((session) => session.events()).sort((a, b) => a - b);
  return { completed, eventsPerSession: events[Math.floor(events.length / 2)] ?? 0, first: outcomes[0] };
}

/** Samples live objects from now on; `take` writes what is alive at that moment to `file`. */
async function liveHeapProfile(file: string): Promise<() => Promise<void>> {
  const session = new InspectorSession();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 8192 });
  return async () => {
    const { profile } = await session.post('HeapProfiler.getSamplingProfile');
    await session.post('HeapProfiler.stopSampling');
    session.disconnect();
    writeFileSync(file, JSON.stringify(profile));
  };
}

export async function loadRun(
  library: LoadLibrary,
  count: number,
  turns: number,
  tools: number,
  heapLive?: string,
  cpuProfile?: string,
): Promise<LoadRun> {
  // A few sessions first: compiled code and lazily built schemas are not the load's.
  await runSessions(library, 20, turns, tools);
  await fullGc();
  const heapBefore = process.memoryUsage().heapUsed;
  const baselineRss = rssBytes();
  let peakHeap = heapBefore;
  const sampler = setInterval(() => (peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)), 50);
  const take = heapLive ? await liveHeapProfile(heapLive) : undefined;
  const profiler = cpuProfile ? await startCpuProfile() : undefined;
  const clock = startClock();
  const { completed, eventsPerSession, first } = await runSessions(library, count, turns, tools, take);
  const { ms, cpuMs } = clock.stop();
  if (profiler && cpuProfile) writeFileSync(cpuProfile, JSON.stringify(await profiler()));
  clearInterval(sampler);
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  const peakRss = peakRssBytes();
  if (completed !== count) {
    throw new Error(
      `load ${library}: ${count - completed} of ${count} sessions did not complete (first: ${JSON.stringify(first)})`,
    );
  }
  await fullGc();
  const mb = (bytes: number) => round2(bytes / MB);
  return {
    library,
    sessions: count,
    turns,
    tools,
    wallMs: Math.round(ms),
    cpuMs: Math.round(cpuMs),
    peakRssMB: mb(peakRss),
    baselineRssMB: mb(baselineRss),
    peakHeapMB: mb(peakHeap),
    heapAfterMB: mb(process.memoryUsage().heapUsed),
    heapBeforeMB: mb(heapBefore),
    completed,
    eventsPerSession,
  };
}

/** Starts the CPU profiler (250 µs samples); the function returned stops it and gives the profile. */
async function startCpuProfile(): Promise<() => Promise<unknown>> {
  const session = new InspectorSession();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    return profile;
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const heapLive = process.argv.find((arg) => arg.startsWith('--heap-live='))?.slice('--heap-live='.length);
  const cpu = process.argv.find((arg) => arg.startsWith('--cpu='))?.slice('--cpu='.length);
  const [library, sessions, turns = '20', tools = '3'] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  if (library !== 'agentchart' && library !== 'pi' && library !== 'scripted') {
    process.stderr.write('usage: bench/load.ts <agentchart|pi|scripted> <sessions> [turns] [tools]\n');
    process.exit(2);
  }
  const result = await loadRun(library, Number(sessions), Number(turns), Number(tools), heapLive, cpu);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
