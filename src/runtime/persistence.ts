import { z } from 'zod';
import { AgentError } from '../domain/errors.js';
import type { AgentEvent } from '../domain/events.js';
import { MessageSchema } from '../domain/messages.js';
import {
  SessionHeadSchema,
  StoredEventSchema,
  type SessionStep,
  type SessionStore,
  type StoredEvent,
} from '../store/types.js';
import { checkpointOf, type ApprovalVersions } from './checkpoint.js';
import { contextViewOf, type SessionHistory } from './history.js';
import { sessionWritten } from './parking.js';
import { machinesOf } from './step-machines.js';
import type { AgentState, RunStop, StepWriter } from './run-session.js';

/** Events buffered between steps before they are written anyway (a tool sending a million progress updates). */
export const MAX_BUFFERED_EVENTS = 256;

/**
 * Writes one step per committed change: the events since the last step, the history's change and
 * a checkpoint derived from the machines, in order. A step is taken after each actor step that
 * changed something (an event published, history committed, a queue changed). Embedded stores commit each step synchronously; an async store gets the
 * steps one after another (a write waits for the previous one), so steps never reorder. A step is
 * validated before it is written: the store never holds what `load` would reject. A failed write is
 * final (store failures are fatal, never silent): nothing more is written and `onFailure` ends the run.
 */
export class Persister implements StepWriter {
  private buffered: AgentEvent[] = [];
  private dirty = false;
  /** The version a durable approval request was first stored at (resolveApproval must quote it). */
  readonly approvals: ApprovalVersions;
  private readonly queue: SessionStep[] = [];
  private writing = false;
  private idle: Array<() => void> = [];
  /** Why the first failed write failed (StoreFailed, or SessionLost when fenced); nothing is written after it. */
  failure: AgentError | null = null;
  /** The fencing token every step carries (null: the store is used without a lease). */
  token: number | null = null;

  constructor(
    private readonly store: SessionStore,
    private readonly agent: AgentState,
    readonly sessionId: string,
    public version: number,
    private readonly onFailure: (failure: AgentError) => void,
  ) {
    this.approvals = { durable: !agent.options.approval, pending: [] };
    this.written = version;
  }

  /** Publications in seq order, each waiting for what it needs written (see publishWhenWritten). */
  private readonly outbox: Array<{ publish: () => void; after: AgentEvent | number | null }> = [];
  /** The version of the step each recorded event was written in. */
  private readonly stepOf = new WeakMap<AgentEvent, number>();
  /** The last version known to be in the store. */
  private written: number;

  /** The session was reloaded at `version`: the next step follows it. */
  rebase(version: number): void {
    this.version = version;
    this.written = version;
  }

  publishWhenWritten(publish: () => void, after: AgentEvent | number | null): void {
    this.outbox.push({ publish, after });
    this.publishWritten();
  }

  /** Publishes the head of the outbox while what it waits for is written (all of it once nothing more will be). */
  private publishWritten(): void {
    while (this.outbox.length > 0) {
      const head = this.outbox[0] as { publish: () => void; after: AgentEvent | number | null };
      if (head.after !== null && !this.failure && !this.detached) {
        const version = typeof head.after === 'number' ? head.after : this.stepOf.get(head.after);
        if (version === undefined || version > this.written) return;
      }
      this.outbox.shift();
      head.publish();
    }
  }

  record(event: AgentEvent): void {
    this.buffered.push(event);
    // Progress updates change no state: past the limit they are written with an unchanged checkpoint.
    if (event.type === 'toolExecutionUpdate' && this.buffered.length >= MAX_BUFFERED_EVENTS) this.step();
  }

  markDirty(): void {
    this.dirty = true;
  }

  flushStep(): void {
    if (this.dirty) this.step();
  }

  /** The agent let the session go (`close()`): nothing more is written, as if the process had stopped here. */
  detach(): void {
    this.detached = true;
    this.publishWritten();
  }

  private detached = false;

  step(): number | null {
    this.dirty = false;
    if (this.failure || this.detached) return null;
    const { agent } = this;
    const events = this.buffered;
    this.buffered = [];
    let step: SessionStep;
    try {
      step = validatedStep({
        checkpoint: checkpointOf(this.sessionId, this.version + 1, agent, agent.run, this.approvals),
        history: agent.log.takeChanges(),
        events: events.map((event) => encodeEvent(event, agent.log)),
        machines: machinesOf(agent.run),
        ...(this.token !== null ? { token: this.token } : {}),
      });
    } catch (error) {
      this.fail(error);
      return null;
    }
    this.version += 1;
    for (const event of events) this.stepOf.set(event, this.version);
    if (this.store.commitStepSync && !this.writing) {
      this.writeNow(step);
      return this.version;
    }
    this.queue.push(step);
    if (!this.writing) this.drain();
    return this.version;
  }

  private writeNow(step: SessionStep): void {
    try {
      this.store.commitStepSync?.(this.sessionId, step);
    } catch (error) {
      this.fail(error);
      return;
    }
    this.landed(step.checkpoint.version);
  }

  /** A step is in the store: what waited for it is published; a parked run of the session in this process moved on. */
  private landed(version: number): void {
    this.written = Math.max(this.written, version);
    this.publishWritten();
    sessionWritten(this.store, this.sessionId, this.agent, version);
  }

  fail(error: unknown): void {
    if (this.failure) return;
    this.failure = storeFailure(this.sessionId, error);
    // Nothing more will be written: what waited is published (the run ends failed, saying why).
    this.publishWritten();
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
      () => {
        this.landed(next.checkpoint.version);
        this.drain();
      },
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
