import { AgentError } from '../domain/errors.js';
import type { StepSummary } from './step-types.js';
import type { SessionStore } from './types.js';

/** What `forkSession` forks: a session at one of its steps, into a new session. */
export interface ForkOptions {
  /** The session to fork; only read. */
  from: string;
  /** The new session's id (it must not exist yet). */
  to: string;
  /**
   * The event to fork at (its `seq`): the new session is the checkpoint of the last step whose
   * events end at or before it (a step stores its events together: between two steps, the earlier).
   * Absent: the latest step (a copy of the session).
   */
  atSeq?: number;
  /** The run `atSeq` counts in (seq starts again with each run); needed when the session has several runs. */
  runId?: string;
  /** Or the step itself: a version from `store.steps(from)` (not with `atSeq`). */
  version?: number;
}

/** The session `forkSession` made. */
export interface ForkResult {
  /** The new session (`to`): load it with `createAgent({ store, sessionId })`. */
  sessionId: string;
  /** The session it was forked from. */
  from: string;
  /** The step forked: the new session's version, its checkpoint is that step's. */
  version: number;
  /** Events and messages the new session starts with (the original's up to that step). */
  events: number;
  /** Messages in its history. */
  historyLength: number;
  /** The last event the new session holds, or null when it holds none. */
  lastEvent: { runId: string; seq: number } | null;
}

/**
 * Creates a new session whose state is the checkpoint at a step of another: its history, queues,
 * counters and the run in flight as they were then, with the events and step records up to there.
 * It loads and runs like any session (another prompt, another model); the original is untouched.
 * A checkpoint taken mid-run resumes that run when loaded, as after a restart (replay rules apply).
 */
export async function forkSession(store: SessionStore, options: ForkOptions): Promise<ForkResult> {
  const { from, to, atSeq, runId, version } = checkedOptions(options);
  if (!store.steps || !store.fork) {
    throw new AgentError(
      'InvalidOptions',
      'forkSession: this store keeps no step records (memoryStore, sqliteStore and postgresStore do: a store implements steps() and fork())',
    );
  }
  const steps = await store.steps(from);
  const latest = steps.at(-1);
  if (!latest) throw new AgentError('SessionNotFound', `forkSession: session "${from}" does not exist in this store`);
  const step =
    version !== undefined
      ? stepOfVersion(from, steps, version)
      : atSeq === undefined
        ? latest
        : stepAtEvent(from, steps, await eventIndex(store, from, atSeq, runId));
  await store.fork(from, to, step.version);
  const lastEvent = step.events > 0 ? (await store.loadEvents(to, { from: step.events - 1 }))[0] : undefined;
  return {
    sessionId: to,
    from,
    version: step.version,
    events: step.events,
    historyLength: step.historyLength,
    lastEvent: lastEvent ? { runId: lastEvent.runId, seq: lastEvent.seq } : null,
  };
}

/** The position in the session's log of the event `atSeq` of `runId` (or of the session's only run). */
async function eventIndex(store: SessionStore, sessionId: string, atSeq: number, runId?: string): Promise<number> {
  const events = await store.loadEvents(sessionId);
  const runs = [...new Set(events.map((event) => event.runId))];
  const run = runId ?? (runs.length === 1 ? runs[0] : undefined);
  if (run === undefined) {
    throw new AgentError(
      'InvalidInput',
      `forkSession: session "${sessionId}" has ${runs.length} runs (${runs.join(', ')}): name the one atSeq counts in with runId`,
    );
  }
  const index = events.findIndex((event) => event.runId === run && event.seq === atSeq);
  if (index < 0) {
    throw new AgentError('InvalidInput', `forkSession: session "${sessionId}" has no event ${atSeq} in run "${run}"`);
  }
  return index;
}

/** The last step whose events end at or before the event at `index` of the log. */
export function stepAtEvent(sessionId: string, steps: readonly StepSummary[], index: number): StepSummary {
  let found: StepSummary | null = null;
  for (const step of steps) {
    if (step.events > index + 1) break;
    found = step;
  }
  if (!found) {
    throw new AgentError(
      'InvalidInput',
      `forkSession: session "${sessionId}" has no recoverable step at or before event ${index} (its step records begin at version ${steps[0]?.version ?? '?'}: it was stored by an older agentchart)`,
    );
  }
  return found;
}

function stepOfVersion(sessionId: string, steps: readonly StepSummary[], version: number): StepSummary {
  const step = steps.find((candidate) => candidate.version === version);
  if (!step) {
    throw new AgentError(
      'InvalidInput',
      `forkSession: session "${sessionId}" has no recoverable step ${version} (steps ${steps[0]?.version ?? '?'}…${steps.at(-1)?.version ?? '?'} are listed by store.steps())`,
    );
  }
  return step;
}

function checkedOptions(options: ForkOptions): ForkOptions {
  const bad = (what: string) => new AgentError('InvalidInput', `forkSession: ${what}`);
  if (typeof options !== 'object' || options === null) throw bad('pass { from, to, atSeq?, runId?, version? }');
  const { from, to, atSeq, runId, version } = options;
  if (typeof from !== 'string' || from === '') throw bad('`from` must be a non-empty session id');
  if (typeof to !== 'string' || to === '') throw bad('`to` must be a non-empty session id');
  if (to === from) throw bad('`to` must differ from `from`');
  if (atSeq !== undefined && (!Number.isInteger(atSeq) || atSeq < 0)) throw bad('`atSeq` must be an integer ≥ 0');
  if (runId !== undefined && (typeof runId !== 'string' || runId === ''))
    throw bad('`runId` must be a non-empty string');
  if (version !== undefined && (!Number.isInteger(version) || version < 0))
    throw bad('`version` must be an integer ≥ 0');
  if (version !== undefined && atSeq !== undefined) throw bad('give `atSeq` or `version`, not both');
  return options;
}
