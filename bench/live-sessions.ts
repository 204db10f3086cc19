import { createAgent, type Model, type ModelRequest } from 'agentchart';
import { script, waitTool } from './load.js';
import { replayModel } from './replay-model.js';
import { fullGc } from './stats.js';

/**
 * Live memory per session, deterministic: N sessions of the load scenario's workload (20 turns × 3
 * tools waiting 1–5 ms, a subscriber on each run) all held at their last model call, where each
 * holds the most it ever does (its whole history, its run's replay buffer); the live heap after a
 * full GC against the same process before, divided by N. Then released, every run must complete.
 * Unlike the peak RSS under load (bench/load.ts), it does not depend on when V8 collects.
 *
 *   TSX_TSCONFIG_PATH=bench/tsconfig.dist.json npx tsx bench/live-sessions.ts [sessions] [replayBuffer]
 */

const TURNS = 20;
const TOOLS = 3;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The replay model, whose last call waits for `gate` before it streams. */
function heldModel(session: number, gate: Promise<void>, onHeld: () => void): Model {
  const inner = replayModel(script(session, TURNS, TOOLS));
  let calls = 0;
  return {
    name: 'held',
    stream(request: ModelRequest, options: { signal: AbortSignal }) {
      if (calls++ < TURNS) return inner.stream(request, options);
      return (async function* () {
        onHeld();
        await gate;
        yield* inner.stream(request, options);
      })();
    },
  };
}

async function sessions(count: number, replayBuffer: number | undefined, atPeak: () => Promise<void>) {
  let held = 0;
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const runs = Array.from({ length: count }, (_, session) => {
    const model = heldModel(session, gate, () => held++);
    const run = createAgent({
      model,
      tools: [waitTool],
      ...(replayBuffer !== undefined ? { replayBuffer } : {}),
    }).prompt('go');
    run.events.subscribe(() => {});
    return run.result;
  });
  while (held < count) await sleep(20);
  await atPeak();
  release();
  const results = await Promise.all(runs);
  const completed = results.filter((r) => r.status === 'completed' && r.counters.toolCallsExecuted === TURNS * TOOLS);
  if (completed.length !== count) throw new Error(`live-sessions: ${count - completed.length} runs did not complete`);
}

const count = Number(process.argv[2] ?? 1_000);
const replayBuffer = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
await sessions(20, replayBuffer, async () => {});
await fullGc();
const before = process.memoryUsage().heapUsed;
let perSession = 0;
await sessions(count, replayBuffer, async () => {
  await fullGc();
  perSession = (process.memoryUsage().heapUsed - before) / count;
});
process.stdout.write(
  `${JSON.stringify({ sessions: count, replayBuffer: replayBuffer ?? 'default', liveKBPerSession: Number((perSession / 1024).toFixed(1)) })}\n`,
);
