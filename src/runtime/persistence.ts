import { z } from 'zod';
import { cloneCounters } from '../domain/counters.js';
import { AgentError } from '../domain/errors.js';
import type { AgentEvent } from '../domain/events.js';
import { MessageSchema, toolCallsOf, type Message } from '../domain/messages.js';
import {
  SessionHeadSchema,
  StoredEventSchema,
  type RunCheckpoint,
  type SessionHead,
  type SessionStep,
  type SessionStore,
  type StoredEvent,
  type TurnCheckpoint,
} from '../store/types.js';
import { contextViewOf, type SessionHistory } from './history.js';
import type { AgentState, RunSession, RunStop } from './run-session.js';

interface MasterView {
  steeringQueue: Message[];
  followUpQueue: Message[];
  pending: Message[];
  turnIndex: number;
  turnsThisRun: number;
  modelIndex: number;
}

/** Events buffered between steps before they are written anyway (a tool sending a million progress updates). */
export const MAX_BUFFERED_EVENTS = 256;

/**
 * Writes one step per committed change: the events since the last step, the history's change and
 * a checkpoint, in order. Embedded stores commit each step synchronously; an async store gets the
 * steps one after another (a write waits for the previous one), so steps never reorder. A step is
 * validated before it is written: the store never holds what `load` would reject. A failed write is
 * final (DESIGN §11): nothing more is written and `onFailure` ends the run.
 */
export class Persister {
  private buffered: AgentEvent[] = [];
  private readonly queue: SessionStep[] = [];
  private writing = false;
  private idle: Array<() => void> = [];
  /** Why the first failed write failed (StoreFailed, or SessionLost when fenced); nothing is written after it. */
  failure: AgentError | null = null;
  /** The fencing token every step carries (null: the store is used without a lease). */
  token: number | null = null;

  constructor(
    private readonly store: SessionStore,
    readonly sessionId: string,
    public version: number,
    private readonly onFailure: (failure: AgentError) => void,
  ) {}

  record(event: AgentEvent, agent: AgentState, run: RunSession): void {
    this.buffered.push(event);
    // Progress updates change no state: past the limit they are written with an unchanged checkpoint.
    if (event.type === 'toolExecutionUpdate' && this.buffered.length >= MAX_BUFFERED_EVENTS) this.step(agent, run);
  }

  /** The agent let the session go (`close()`): nothing more is written, as if the process had stopped here. */
  detach(): void {
    this.detached = true;
  }

  private detached = false;

  step(agent: AgentState, run: RunSession | null): void {
    if (this.failure || this.detached) return;
    const events = this.buffered;
    this.buffered = [];
    let step: SessionStep;
    try {
      step = validatedStep({
        checkpoint: buildHead(this.sessionId, this.version + 1, agent, run),
        history: agent.log.takeChanges(),
        events: events.map((event) => encodeEvent(event, agent.log)),
        ...(this.token !== null ? { token: this.token } : {}),
      });
    } catch (error) {
      this.fail(error);
      return;
    }
    this.version += 1;
    if (this.store.commitStepSync && !this.writing) {
      this.writeNow(step);
      return;
    }
    this.queue.push(step);
    if (!this.writing) this.drain();
  }

  private writeNow(step: SessionStep): void {
    try {
      this.store.commitStepSync?.(this.sessionId, step);
    } catch (error) {
      this.fail(error);
    }
  }

  fail(error: unknown): void {
    if (this.failure) return;
    this.failure = storeFailure(this.sessionId, error);
    this.onFailure(this.failure);
  }

  /** A write is in flight (an async store): whatever must follow a durable step waits for `settled()`. */
  get busy(): boolean {
    return this.writing;
  }

  /** Resolves when every step so far is written or the store failed (never rejects). */
  settled(): Promise<void> {
    if (!this.writing) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Resolves when every step so far is written; rejects with the failure if a write failed. */
  async flushed(): Promise<void> {
    await this.settled();
    if (this.failure) throw this.failure;
  }

  private drain(): void {
    const next = this.queue.shift();
    if (!next || this.failure) {
      this.writing = false;
      this.queue.length = 0;
      for (const resolve of this.idle.splice(0)) resolve();
      return;
    }
    this.writing = true;
    this.store.commitStep(this.sessionId, next).then(
      () => this.drain(),
      (error: unknown) => {
        this.fail(error);
        this.drain();
      },
    );
  }
}

/** How a run ends when its store failed: `sessionLost` when fenced by a newer lease, else `storeFailed`. */
export function runStopOf(failure: AgentError): RunStop {
  return { code: failure.code === 'SessionLost' ? 'sessionLost' : 'storeFailed', message: failure.message };
}

/** A failed write as the run reports it: fenced by a newer lease (SessionLost), or StoreFailed naming the cause. */
function storeFailure(sessionId: string, error: unknown): AgentError {
  if (error instanceof AgentError && (error.code === 'SessionLost' || error.code === 'StoreFailed')) return error;
  const detail =
    error instanceof AgentError
      ? `${error.code}: ${error.message}`
      : error instanceof Error
        ? error.message
        : String(error);
  return new AgentError('StoreFailed', `session "${sessionId}": the store failed to write a step (${detail})`);
}

/**
 * An event as stored: a `messages` field backed by a history view becomes a reference (prefix
 * length + tail). The view's positions are unchanged in the history it was made from as long as
 * that is still the log's array (changes go to a copy); otherwise the messages are written out.
 */
function encodeEvent(event: AgentEvent, log: SessionHistory): StoredEvent {
  const view = contextViewOf(event);
  if (!view) return event;
  const stored: Record<string, unknown> = {};
  for (const key of Object.keys(event)) {
    stored[key] =
      key !== 'messages'
        ? event[key as keyof AgentEvent]
        : view.isOver(log.messages)
          ? { historyPrefix: view.prefix, tail: view.tail }
          : { historyPrefix: 0, tail: view.messages() };
  }
  return stored as StoredEvent;
}

/** The step as the store will write it, checked against the schemas `load` and `loadEvents` apply. */
function validatedStep(step: SessionStep): SessionStep {
  const problems: string[] = [];
  const check = (what: string, result: z.ZodSafeParseResult<unknown>) => {
    if (!result.success) problems.push(`${what}: ${z.prettifyError(result.error)}`);
  };
  check('checkpoint', SessionHeadSchema.safeParse(step.checkpoint));
  step.history.messages.forEach((message, index) =>
    check(`message ${step.history.from + index}`, MessageSchema.safeParse(message)),
  );
  step.events.forEach((event) => check(`event ${event.type} (seq ${event.seq})`, StoredEventSchema.safeParse(event)));
  if (problems.length > 0) {
    throw new AgentError(
      'StoreFailed',
      `session "${step.checkpoint.sessionId}": the step was not written, it would not load again (${problems.join('; ')})`,
    );
  }
  return step;
}

function buildHead(sessionId: string, version: number, agent: AgentState, run: RunSession | null): SessionHead {
  const master = run?.master?.getSnapshot().context as MasterView | undefined;
  // Between a turnEnd and the master's decision the master has not advanced its turn index yet.
  const closedAhead = run?.lastClosedTurn != null && master !== undefined && run.lastClosedTurn >= master.turnIndex;
  return {
    sessionId,
    version,
    historyLength: agent.log.length,
    steeringQueue: [...(master?.steeringQueue ?? agent.steeringQueue)],
    followUpQueue: [...(master?.followUpQueue ?? agent.followUpQueue)],
    counters: cloneCounters(agent.counters),
    turnIndex: closedAhead ? (run?.lastClosedTurn ?? 0) + 1 : (master?.turnIndex ?? agent.turnIndex),
    run: run && !run.ended ? runCheckpoint(run, master, closedAhead) : null,
  };
}

function runCheckpoint(run: RunSession, master: MasterView | undefined, closedAhead: boolean): RunCheckpoint {
  return {
    runId: run.runId,
    nextSeq: run.nextSeq,
    pending: [...(master?.pending ?? [])],
    turnsThisRun: (master?.turnsThisRun ?? 0) + (closedAhead ? 1 : 0),
    modelIndex: run.modelIndex,
    turn: run.turn.open ? turnCheckpoint(run) : null,
  };
}

function turnCheckpoint(run: RunSession): TurnCheckpoint {
  const { turn } = run;
  const committed = turn.committedAssistant !== null;
  return {
    turnIndex: turn.turnIndex,
    reply: turn.reply ? { message: turn.reply.message, invalidCalls: [...turn.reply.invalidCalls] } : null,
    results: [...turn.announcedEnds.values()],
    started: [...turn.started],
    approved: [...turn.approved],
    requested: [...turn.requested],
    pendingApproval: turn.pendingApproval
      ? {
          toolCallId: turn.pendingApproval.toolCallId,
          toolName: turn.pendingApproval.toolName,
          arguments: turn.pendingApproval.arguments,
          version: turn.pendingApproval.version,
        }
      : null,
    committed,
  };
}

/** Whether a committed reply asks for more work (its tool calls), for resuming between turns. */
export function replyHadToolCalls(checkpoint: TurnCheckpoint): boolean {
  return checkpoint.reply !== null && toolCallsOf(checkpoint.reply.message).length > 0;
}
