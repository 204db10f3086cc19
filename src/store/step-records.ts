import { z } from 'zod';
import { AgentError } from '../domain/errors.js';
import { applyJsonPatch, diffJson, type JsonValue } from './json-patch.js';
import { StepMachinesSchema, type StepMachines, type StepSummary } from './step-types.js';
import { SessionHeadSchema, type SessionHead, type SessionStep } from './types.js';

/**
 * Per-step records: what makes every step of a session's past recoverable (time travel, fork),
 * kept linear and small. Each step stores one row: a keyframe (the whole head and the charts'
 * states) or a patch against the step before it. A keyframe is written when the patches since the
 * last one outweigh it (or after `MAX_CHAIN` steps), so storage stays within a small multiple of
 * what changed, and recovering a step reads one keyframe and a bounded chain of patches. Messages
 * a step replaces (a discarded reply, a replaced assistant message) are kept aside with the
 * version that replaced them: the history as of any step is the current one with those put back.
 */

/** One stored record: a keyframe when `base === version`, else a patch on the record of `version - 1`. */
export interface StepRecordRow {
  version: number;
  /** The version of the keyframe this record's chain starts at. */
  base: number;
  record: string;
}

/** A message a step replaced or cut off, with the version of that step. */
export interface ReplacedMessage {
  position: number;
  replacedAt: number;
  message: string;
}

/** What a record holds: the head without the row's own columns (session id, version, history length). */
type StepBody = { head: JsonValue; machines: StepMachines | null };

/** What identifies a session's last stored record: a chain continues only from the record it wrote last. */
export interface StepRowTag {
  version: number;
  base: number;
  committedAt: number;
}

/** What the session row read in a step's transaction says of the session before the step. */
export interface StoredSession {
  historyLength: number;
  eventCount: number;
  /** The version of the last step stored, and when it was committed. */
  version: number;
  committedAt: number;
}

interface Chain extends StepRowTag {
  body: StepBody;
  base: number;
  keyframeBytes: number;
  bytesSinceKeyframe: number;
  stepsSinceKeyframe: number;
}

/** Patches after a keyframe never add up to more than this or the keyframe, whichever is larger. */
const MIN_CHAIN_BYTES = 16_384;
/** At most this many patches follow a keyframe: recovering a step stays cheap. */
export const MAX_CHAIN = 256;

/**
 * Encodes each step of the sessions a store writes, remembering the last record per session (for
 * the next patch). A store passes what it holds last for the session: when that is not the record
 * remembered here (another process wrote since, the cache forgot it), a keyframe is written.
 */
export class StepRecorder {
  private readonly chains = new Map<string, Chain>();

  constructor(private readonly capacity = 256) {}

  encode(sessionId: string, step: SessionStep, last: StepRowTag | null, committedAt: number): StepRecordRow {
    const { version } = step.checkpoint;
    const body = bodyOf(step);
    const chain = this.chains.get(sessionId);
    this.chains.delete(sessionId);
    const continues =
      chain !== undefined &&
      last !== null &&
      chain.version === version - 1 &&
      last.version === chain.version &&
      last.base === chain.base &&
      last.committedAt === chain.committedAt;
    if (chain && continues) {
      const record = JSON.stringify(diffJson(chain.body as unknown as JsonValue, body as unknown as JsonValue) ?? {});
      const budget = Math.max(chain.keyframeBytes, MIN_CHAIN_BYTES);
      if (chain.bytesSinceKeyframe + record.length <= budget && chain.stepsSinceKeyframe < MAX_CHAIN) {
        this.remember(sessionId, {
          ...chain,
          version,
          committedAt,
          body,
          bytesSinceKeyframe: chain.bytesSinceKeyframe + record.length,
          stepsSinceKeyframe: chain.stepsSinceKeyframe + 1,
        });
        return { version, base: chain.base, record };
      }
    }
    const record = JSON.stringify(body);
    this.remember(sessionId, {
      version,
      base: version,
      committedAt,
      body,
      keyframeBytes: record.length,
      bytesSinceKeyframe: 0,
      stepsSinceKeyframe: 0,
    });
    return { version, base: version, record };
  }

  /**
   * The last step this recorder wrote for the session, when the session row read in the step's
   * transaction names it (same version, same commit time): it is still the last one stored, so the
   * store need not read it back. Null: the store reads its last step row.
   */
  lastWritten(sessionId: string, stored: { version: number; committedAt: number }): StepRowTag | null {
    const chain = this.chains.get(sessionId);
    return chain && chain.version === stored.version && chain.committedAt === stored.committedAt ? chain : null;
  }

  /** The session was deleted or rewritten elsewhere: its next step starts a keyframe. */
  forget(sessionId: string): void {
    this.chains.delete(sessionId);
  }

  private remember(sessionId: string, chain: Chain): void {
    this.chains.set(sessionId, chain);
    // The least recently written session goes first: a store serving many sessions stays bounded.
    if (this.chains.size > this.capacity) this.chains.delete(this.chains.keys().next().value as string);
  }
}

function bodyOf(step: SessionStep): StepBody {
  const { sessionId: _id, version: _version, historyLength: _length, ...head } = step.checkpoint;
  return { head: head as unknown as JsonValue, machines: step.machines ?? null };
}

/**
 * The head and charts' states of the last row, from its keyframe and the patches after it (`rows`
 * in version order, the first a keyframe). Anything unreadable is a typed error naming the session.
 */
export function replayStepRecords(
  sessionId: string,
  rows: readonly StepRecordRow[],
  summary: { version: number; historyLength: number },
): { head: SessionHead; machines: StepMachines | null } {
  const first = rows[0];
  const last = rows.at(-1);
  if (!first || !last || first.base !== first.version || last.version !== summary.version) {
    throw corrupted(sessionId, summary.version, 'its record chain is incomplete');
  }
  let body: JsonValue = null;
  for (const row of rows) {
    const parsed = parseRecord(sessionId, row);
    body = row.base === row.version ? parsed : applyJsonPatch(body, parsed as never);
  }
  const { head, machines } = body as unknown as StepBody;
  const parsedHead = SessionHeadSchema.safeParse({
    ...(head as object),
    sessionId,
    version: summary.version,
    historyLength: summary.historyLength,
  });
  if (!parsedHead.success) throw corrupted(sessionId, summary.version, z.prettifyError(parsedHead.error));
  const parsedMachines = StepMachinesSchema.nullable().safeParse(machines ?? null);
  if (!parsedMachines.success) throw corrupted(sessionId, summary.version, z.prettifyError(parsedMachines.error));
  return { head: parsedHead.data, machines: parsedMachines.data };
}

function parseRecord(sessionId: string, row: StepRecordRow): JsonValue {
  try {
    return JSON.parse(row.record) as JsonValue;
  } catch {
    throw corrupted(sessionId, row.version, 'its record is not valid JSON');
  }
}

/**
 * The history as of a step, as stored JSON: `current` (today's messages, by position) with the
 * messages later steps replaced put back — for each position, the one replaced first after `version`.
 */
export function historyAsOf(
  sessionId: string,
  current: readonly string[],
  replaced: readonly ReplacedMessage[],
  version: number,
  length: number,
): string[] {
  const restored = new Map<number, ReplacedMessage>();
  for (const entry of replaced) {
    if (entry.replacedAt <= version || entry.position >= length) continue;
    const known = restored.get(entry.position);
    if (!known || entry.replacedAt < known.replacedAt) restored.set(entry.position, entry);
  }
  const history: string[] = [];
  for (let position = 0; position < length; position++) {
    const message = restored.get(position)?.message ?? current[position];
    if (message === undefined) throw corrupted(sessionId, version, `message ${position} of its history is missing`);
    history.push(message);
  }
  return history;
}

function corrupted(sessionId: string, version: number, detail: string): AgentError {
  return new AgentError(
    'StoreCorrupted',
    `session "${sessionId}": the record of step ${version} is invalid: ${detail}`,
  );
}

/** A keyframe row for a head and its charts' states (a step recovered without a record of its own). */
export function keyframeRow(head: SessionHead, machines: StepMachines | null): StepRecordRow {
  const { sessionId: _id, version, historyLength: _length, ...rest } = head;
  return { version, base: version, record: JSON.stringify({ head: rest, machines }) };
}

/** The rows from the keyframe of `version` to it, out of a session's rows in version order; null if it has none. */
export function chainOf<T extends StepRecordRow>(rows: readonly T[], version: number): T[] | null {
  let low = 0;
  let high = rows.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const row = rows[middle] as T;
    if (row.version === version) {
      let start = middle;
      while (start > 0 && (rows[start] as T).version > row.base) start--;
      return rows.slice(start, middle + 1);
    }
    if (row.version < version) low = middle + 1;
    else high = middle - 1;
  }
  return null;
}

/**
 * The steps a store lists: its records, and the session's current head when no record has it yet
 * (a session written before step records existed: its latest step is still recoverable).
 */
export function withCurrentStep(recorded: StepSummary[], current: StepSummary | null): StepSummary[] {
  if (!current || recorded.at(-1)?.version === current.version) return recorded;
  return [...recorded.filter((step) => step.version < current.version), current];
}

/** InvalidInput: the fork's target already exists. */
export function forkTargetExists(to: string): AgentError {
  return new AgentError('InvalidInput', `forkSession: session "${to}" already exists; fork into a new session id`);
}

export function sessionNotFound(sessionId: string): AgentError {
  return new AgentError('SessionNotFound', `session "${sessionId}" does not exist in this store`);
}

/** InvalidInput: no checkpoint of `version` can be recovered. */
export function stepNotRecorded(sessionId: string, version: number): AgentError {
  return new AgentError(
    'InvalidInput',
    `session "${sessionId}": step ${version} cannot be recovered (it has no record: it was written before step records existed, or does not exist)`,
  );
}
