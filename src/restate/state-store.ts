import type { AgentEvent } from '../domain/events.js';
import type { Message } from '../domain/messages.js';
import type { SessionHead, SessionStep, SessionStore, StoredEvent } from '../store/types.js';
import {
  assembleCheckpoint,
  checkStep,
  expandEvents,
  parseHead,
  parseMessage,
  parseStoredEvent,
} from '../store/validate.js';

/**
 * The session in Restate's K/V state of its virtual object. A step appends: the head, the history
 * chunks it touched and its own events under its version; nothing is rewritten as the session grows.
 *   head              the checkpoint without history (SessionHead)
 *   history:<k>       messages [k·16, k·16+16) as JSON strings
 *   step:<version>    the events of that step (StoredEvent JSON strings)
 *   runs              [{ runId, firstStep }] in order: where each run's events start
 */
export const HISTORY_CHUNK = 16;

export interface RunIndexEntry {
  runId: string;
  firstStep: number;
}

/** What the state is read through: a handler context, exclusive or shared. */
export interface StateReader {
  get<T>(key: string): Promise<T | null>;
}

/** What the state is written through: the exclusive handler's context (`ctx.set` journals the write). */
export interface StateWriter {
  set<T>(key: string, value: T): void;
}

export interface StoredSession {
  head: SessionHead | null;
  /** The history as stored JSON, one string per message. */
  history: string[];
  runs: RunIndexEntry[];
}

export async function readHead(sessionId: string, state: StateReader): Promise<SessionHead | null> {
  const json = await state.get<string>('head');
  return json === null ? null : parseHead(sessionId, json);
}

/** The head, the whole history and the run index, read one key after another. */
export async function readSession(sessionId: string, state: StateReader): Promise<StoredSession> {
  const head = await readHead(sessionId, state);
  const history: string[] = [];
  const length = head?.historyLength ?? 0;
  for (let chunk = 0; chunk * HISTORY_CHUNK < length; chunk++) {
    history.push(...((await state.get<string[]>(`history:${chunk}`)) ?? []));
  }
  history.length = Math.min(history.length, length);
  const runs = (await state.get<RunIndexEntry[]>('runs')) ?? [];
  return { head, history, runs };
}

export function parseHistory(sessionId: string, history: readonly string[]): Message[] {
  return history.map((json, position) => parseMessage(sessionId, json, position));
}

/**
 * The session's events with `seq > afterSeq` (seq counts per run): of every run, or of `runId` only;
 * `messages` references resolved against the stored history.
 */
export async function readEvents(
  sessionId: string,
  state: StateReader,
  options: { afterSeq: number; runId?: string },
): Promise<AgentEvent[]> {
  const session = await readSession(sessionId, state);
  if (!session.head) return [];
  const at = options.runId === undefined ? 0 : session.runs.findIndex((run) => run.runId === options.runId);
  const first = session.runs[at];
  if (!first) return [];
  const lastStep =
    options.runId === undefined
      ? session.head.version
      : (session.runs[at + 1]?.firstStep ?? session.head.version + 1) - 1;
  const stored: StoredEvent[] = [];
  for (let step = first.firstStep; step <= lastStep; step++) {
    for (const json of (await state.get<string[]>(`step:${step}`)) ?? []) {
      const event = parseStoredEvent(sessionId, json);
      if ((options.runId === undefined || event.runId === options.runId) && event.seq > options.afterSeq)
        stored.push(event);
    }
  }
  return expandEvents(sessionId, stored, () => parseHistory(sessionId, session.history));
}

/**
 * The SessionStore port over the state, for one session in one invocation of its exclusive handler.
 * It holds what was read at the start and commits each step synchronously with `ctx.set`, so the
 * writes take the run's own deterministic order in the journal.
 */
export function stateStore(
  sessionId: string,
  stored: StoredSession,
  state: StateWriter,
): SessionStore & Required<Pick<SessionStore, 'commitStepSync'>> {
  const history = [...stored.history];
  const runs = [...stored.runs];
  let version = stored.head?.version ?? -1;
  const store: SessionStore & Required<Pick<SessionStore, 'commitStepSync'>> = {
    async load(id) {
      if (id !== sessionId || !stored.head) return null;
      return assembleCheckpoint(sessionId, stored.head, parseHistory(sessionId, history));
    },
    async commitStep(id, step) {
      store.commitStepSync(id, step);
    },
    commitStepSync(id, step: SessionStep) {
      checkStep(id, { version, historyLength: history.length }, step);
      const messages = step.history.messages.map((message) => JSON.stringify(message));
      const changed = step.history.from < history.length || messages.length > 0;
      history.length = step.history.from;
      history.push(...messages);
      if (changed) {
        const last = Math.max(0, Math.ceil(history.length / HISTORY_CHUNK) - 1);
        for (let chunk = Math.floor(step.history.from / HISTORY_CHUNK); chunk <= last; chunk++) {
          state.set(`history:${chunk}`, history.slice(chunk * HISTORY_CHUNK, (chunk + 1) * HISTORY_CHUNK));
        }
      }
      version = step.checkpoint.version;
      if (step.events.length > 0) {
        const runId = step.events[0]!.runId;
        if (runs.at(-1)?.runId !== runId) {
          runs.push({ runId, firstStep: version });
          state.set('runs', runs);
        }
        state.set(
          `step:${version}`,
          step.events.map((event) => JSON.stringify(event)),
        );
      }
      state.set('head', JSON.stringify(step.checkpoint));
    },
    // The runtime never reads events back through the port; the shared `events` handler reads the state.
    async loadEvents() {
      return [];
    },
    async list() {
      return stored.head || version >= 0 ? [{ sessionId, version, running: false, updatedAt: 0 }] : [];
    },
    async delete() {
      throw new Error('agentchart/restate: a session on Restate is deleted by clearing its virtual object state');
    },
    // Restate runs one exclusive handler per key: the hosted agent takes no lease, these never refuse.
    async acquire(_id, owner) {
      return { owner, token: 1, expiresAt: Number.MAX_SAFE_INTEGER, version };
    },
    async renew(_id, lease) {
      return lease;
    },
    async release() {},
  };
  return store;
}
