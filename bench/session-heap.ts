import { createAgent } from 'agentchart';
import { generateText, streamText } from 'ai';
import { aiSdkOptions, aiSdkWorkDone, scriptedLanguageModel } from './ai-sdk-driver.js';
import { CONTENDERS, expectWork, type Contender } from './drivers.js';
import { handLoop } from './hand-loop.js';
import { piAgent, piWorkDone } from './pi-driver.js';
import { collectNow, fullGc, liveBytes, MB, round2 } from './stats.js';
import { benchTools, turnsModel, turnsReplies, type WorkDone } from './workload.js';

/**
 * The heap of a session of T turns (K=1), in a process of its own (the benchmark starts one per
 * contender), after a warm-up session and a full GC: live while it runs — a full GC as its last
 * model call starts (the session holds its whole history then) — and held once it ended, with
 * what its caller naturally keeps referenced (the agent, the run and its result; pi's agent; the
 * AI SDK's result and steps; the hand loop's result). Also the heap used at the end without a GC,
 * garbage included. Live figures are heap plus external memory. Prints one JSON line.
 *
 *   npx tsx bench/session-heap.ts <contender> [turns]
 */

export interface SessionHeap {
  contender: Contender;
  turns: number;
  /** Live memory of the running session as its last model call starts, MB. */
  liveMB: number;
  /** Live memory the finished session holds (its caller's references kept), MB. */
  retainedMB: number;
  /** Heap used right after the session, no GC (garbage included), MB. */
  usedMB: number;
}

async function session(
  contender: Contender,
  turns: number,
  atLastCall: () => void = () => {},
): Promise<{ work: WorkDone; held: unknown }> {
  const onCall = (callIndex: number) => void (callIndex === turns && atLastCall());
  const replies = turnsReplies(turns, 1);
  const script = (callIndex: number) => (onCall(callIndex), replies(callIndex));
  switch (contender) {
    case 'agentchart': {
      const agent = createAgent({ model: turnsModel(turns, 1, onCall), tools: benchTools });
      const run = agent.prompt('go');
      const result = await run.result;
      const { turns: done, toolCallsExecuted } = result.counters;
      return { work: { status: result.status, turns: done, toolCallsExecuted }, held: [agent, run, result] };
    }
    case 'hand': {
      const result = await handLoop('go', { model: turnsModel(turns, 1, onCall), tools: benchTools });
      const { turns: done, toolCallsExecuted } = result.counters;
      return { work: { status: result.status, turns: done, toolCallsExecuted }, held: result };
    }
    case 'pi': {
      const agent = piAgent(script);
      await agent.prompt('go');
      return { work: piWorkDone(agent), held: agent };
    }
    case 'aiSdk': {
      const result = streamText(aiSdkOptions(scriptedLanguageModel(script), turns));
      await result.consumeStream();
      const steps = await result.steps;
      return { work: aiSdkWorkDone(steps, await result.finishReason), held: [result, steps] };
    }
    case 'aiSdkGenerate': {
      const result = await generateText(aiSdkOptions(scriptedLanguageModel(script), turns));
      return { work: aiSdkWorkDone(result.steps, result.finishReason), held: result };
    }
  }
}

export async function sessionHeap(contender: Contender, turns: number): Promise<SessionHeap> {
  // A shorter session first: compiled code and lazily built schemas are not the session's.
  await session(contender, 200);
  const mb = (bytes: number) => round2(bytes / MB);
  // Held once it ended, and the heap used right after it with no GC (garbage included).
  await fullGc();
  let before = liveBytes();
  const usedBefore = process.memoryUsage().heapUsed;
  let ran = await session(contender, turns);
  const used = process.memoryUsage().heapUsed - usedBefore;
  expectWork(`${contender} session heap`, { ...ran.work, ms: 0, cpuMs: 0 }, turns + 1, turns);
  await fullGc();
  const retained = liveBytes() - before;
  if (ran.held === undefined) throw new Error('unreachable');
  // Live while it runs: another session, a full GC as its last model call starts.
  ran = { work: ran.work, held: null };
  await fullGc();
  before = liveBytes();
  let live = Number.NaN;
  ran = await session(contender, turns, () => {
    collectNow();
    live = liveBytes() - before;
  });
  expectWork(`${contender} session heap`, { ...ran.work, ms: 0, cpuMs: 0 }, turns + 1, turns);
  return { contender, turns, liveMB: mb(live), retainedMB: mb(retained), usedMB: mb(used) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [contender, turns = '2000'] = process.argv.slice(2);
  if (!CONTENDERS.includes(contender as Contender)) {
    process.stderr.write(`usage: bench/session-heap.ts <${CONTENDERS.join('|')}> [turns]\n`);
    process.exit(2);
  }
  process.stdout.write(`${JSON.stringify(await sessionHeap(contender as Contender, Number(turns)))}\n`);
}
