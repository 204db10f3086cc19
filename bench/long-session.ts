import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import {
  createAgent,
  defineTool,
  type AnyTool,
  type Model,
  type ModelStreamEvent,
  type SessionStore,
} from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { fullGc, liveBytes, MB, median, round2 } from './stats.js';

/**
 * Long sessions: one session of thousands of turns, each a short text, one tool call
 * and a ~400-character result (a coding agent reading files). Measured at checkpoints while the run
 * is alive: live heap after a full GC against the history's own size, the SQLite file per turn,
 * and the time of commitStep in the first and the last turns. Memory and storage must grow
 * linearly, a step must cost the same at turn 4,000 as at turn 1.
 */

export interface LongSessionPoint {
  turns: number;
  /** Live heap held by the session (agent, run, history, buffers), MB, after a full GC. */
  heapMB: number;
  /** The history's own heap (a structured clone of it, measured the same way), MB. */
  historyHeapMB: number;
  historyJsonMB: number;
  heapOverHistory: number;
  /** The SQLite database file, MB, and its WAL (bounded scratch space of the whole file: SQLite checkpoints it at ~4 MB and reuses it). */
  fileMB: number;
  walMB: number;
  /** Database file / history JSON (the WAL is not the session's: it is shared and bounded). */
  fileOverHistoryJson: number;
}

export interface LongSessionResult {
  store: 'sqlite' | 'none';
  replayBuffer: number | 'default';
  points: LongSessionPoint[];
  /** heap at the last point / heap at the first point (turns ratio: `turnsRatio`). */
  heapRatio: number;
  turnsRatio: number;
  /** Heap and file growth between the first and the last point, per byte of history growth. */
  heapGrowthOverHistory: number;
  fileGrowthOverHistoryJson: number;
  /** Database growth per turn between the first and the last point, KB. */
  fileKBPerTurn: number;
  /** Median commitStep time over the steps of the first and the last `window` turns, µs. */
  commitFirstUs: number;
  commitLastUs: number;
  commitRatio: number;
  window: number;
  runMs: number;
}

const RESULT = 'x'.repeat(400);

const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a file.',
  parameters: z.object({ path: z.string() }),
  replay: 'safe',
  execute: ({ path }) => `${path}: ${RESULT}`,
}) as unknown as AnyTool;

/**
 * A model that reads one file per turn for `turns` turns, then answers; before the model call of
 * each checkpoint turn it awaits `measure` (the run is alive and idle in that await).
 */
function fileReadingModel(
  turns: number,
  checkpoints: ReadonlySet<number>,
  measure: (turn: number) => Promise<void>,
): Model {
  let call = 0;
  return {
    name: 'long-session',
    async *stream(): AsyncIterable<ModelStreamEvent> {
      const turn = call++;
      if (checkpoints.has(turn)) await measure(turn);
      yield { type: 'start' };
      if (turn >= turns) {
        yield { type: 'textDelta', delta: 'All files read.' };
        yield { type: 'done', stopReason: 'stop' };
        return;
      }
      yield { type: 'textDelta', delta: `Reading file ${turn} to continue the change.` };
      yield { type: 'toolCallStart', index: 0, id: `call_${turn}`, name: 'read_file' };
      yield { type: 'toolCallDelta', index: 0, argumentsDelta: JSON.stringify({ path: `src/module-${turn}.ts` }) };
      yield { type: 'toolCallEnd', index: 0 };
      yield { type: 'usage', usage: { input: 1000 + turn, output: 20 } };
      yield { type: 'done', stopReason: 'toolUse' };
    },
  };
}

/** A store that times every commit (sync and async). */
function timedStore(store: ReturnType<typeof sqliteStore>, times: number[]): SessionStore {
  const commitStepSync: NonNullable<SessionStore['commitStepSync']> = (sessionId, step) => {
    const begin = performance.now();
    store.commitStepSync(sessionId, step);
    times.push((performance.now() - begin) * 1000);
  };
  return { ...store, commitStepSync, commitStep: async (sessionId, step) => commitStepSync(sessionId, step) };
}

async function heapOf(make: () => unknown): Promise<number> {
  await fullGc();
  const before = liveBytes();
  const held = make();
  await fullGc();
  const after = liveBytes();
  if (held === undefined) throw new Error('unreachable');
  return after - before;
}

export async function longSession(
  turns: number,
  checkpoints: number[],
  withStore: boolean,
  replayBuffer?: number,
  window = 50,
): Promise<LongSessionResult> {
  // A short session first, so compiled code and lazily built schemas are not counted as the session's.
  await oneSession(200, [], withStore, replayBuffer, window);
  return oneSession(turns, checkpoints, withStore, replayBuffer, window);
}

async function oneSession(
  turns: number,
  checkpoints: number[],
  withStore: boolean,
  replayBuffer: number | undefined,
  window: number,
): Promise<LongSessionResult> {
  const dir = mkdtempSync(join(tmpdir(), 'agentchart-long-'));
  const path = join(dir, 'session.db');
  const raw = withStore ? sqliteStore(path) : null;
  const commitTimes: number[] = [];
  // Steps per turn, to map commit times to turns.
  const stepsAtTurn: number[] = [];
  const points: LongSessionPoint[] = [];
  await fullGc();
  const baseline = liveBytes();
  let agent: ReturnType<typeof createAgent> | null = null;
  const measure = async (turn: number) => {
    const history = agent?.messages ?? [];
    await fullGc();
    const heapBytes = liveBytes() - baseline;
    const historyHeap = await heapOf(() => structuredClone(history));
    const json = JSON.stringify(history).length;
    const [file, wal] = withStore ? fileSizes(path) : [0, 0];
    points.push({
      turns: turn,
      heapMB: round2(heapBytes / MB),
      historyHeapMB: round2(historyHeap / MB),
      historyJsonMB: round2(json / MB),
      heapOverHistory: round2(heapBytes / historyHeap),
      fileMB: round2(file / MB),
      walMB: round2(wal / MB),
      fileOverHistoryJson: withStore ? round2(file / json) : 0,
    });
  };
  const model = fileReadingModel(turns, new Set(checkpoints), measure);
  const store = raw ? timedStore(raw, commitTimes) : undefined;
  agent = createAgent({
    model,
    tools: [readFile],
    ...(replayBuffer !== undefined ? { replayBuffer } : {}),
    ...(store ? { store, sessionId: 'long' } : {}),
  });
  await agent.ready;
  const subscription = agent.events.subscribe((event) => {
    if (event.type === 'turnStart') stepsAtTurn[event.turnIndex] = commitTimes.length;
  });
  const begin = performance.now();
  const run = agent.prompt('Read every module.');
  const result = await run.result;
  const runMs = performance.now() - begin;
  subscription.unsubscribe();
  if (result.status !== 'completed' || result.counters.turns !== turns + 1)
    throw new Error(`bench long session: ${result.status} after ${result.counters.turns} turns`);
  raw?.close();
  rmSync(dir, { recursive: true, force: true });
  const meanOver = (fromTurn: number) => {
    const from = stepsAtTurn[fromTurn] ?? 0;
    const to = stepsAtTurn[fromTurn + window] ?? commitTimes.length;
    return median(commitTimes.slice(from, to));
  };
  const growth = (pick: (p: LongSessionPoint) => number, over: (p: LongSessionPoint) => number) =>
    points.length < 2
      ? 0
      : round2(
          (pick(points.at(-1) as LongSessionPoint) - pick(points[0] as LongSessionPoint)) /
            (over(points.at(-1) as LongSessionPoint) - over(points[0] as LongSessionPoint)),
        );
  const base = {
    store: withStore ? ('sqlite' as const) : ('none' as const),
    replayBuffer: replayBuffer ?? ('default' as const),
    points,
    window,
  };
  if (points.length === 0) {
    return {
      ...base,
      heapRatio: 0,
      turnsRatio: 0,
      heapGrowthOverHistory: 0,
      fileGrowthOverHistoryJson: 0,
      fileKBPerTurn: 0,
      commitFirstUs: 0,
      commitLastUs: 0,
      commitRatio: 0,
      runMs: 0,
    };
  }
  const first = points[0] as LongSessionPoint;
  const last = points.at(-1) as LongSessionPoint;
  const commitFirstUs = withStore ? round2(meanOver(1)) : 0;
  const commitLastUs = withStore ? round2(meanOver(turns - window)) : 0;
  return {
    ...base,
    heapRatio: round2(last.heapMB / first.heapMB),
    turnsRatio: round2(last.turns / first.turns),
    heapGrowthOverHistory: growth(
      (p) => p.heapMB,
      (p) => p.historyHeapMB,
    ),
    fileGrowthOverHistoryJson: growth(
      (p) => p.fileMB,
      (p) => p.historyJsonMB,
    ),
    fileKBPerTurn: growth(
      (p) => p.fileMB * 1024,
      (p) => p.turns,
    ),
    commitFirstUs,
    commitLastUs,
    commitRatio: withStore ? round2(commitLastUs / commitFirstUs) : 0,
    runMs: Math.round(runMs),
  };
}

function fileSizes(path: string): [number, number] {
  const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);
  return [size(path), size(`${path}-wal`)];
}
