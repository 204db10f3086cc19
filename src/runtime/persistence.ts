import type { AgentEvent } from '../domain/events.js';
import type { SessionCheckpoint, SessionStore } from '../store/types.js';
import { checkpointOf, type ApprovalVersions } from './checkpoint.js';
import type { AgentState, StepWriter } from './run-session.js';

/**
 * Writes one step per committed change: the events since the last step and a checkpoint derived
 * from the machines, in order. A step is taken after each actor step that changed something (an
 * event published, history committed, a queue changed). Embedded stores commit each step
 * synchronously; an async store gets the steps one after another (a write waits for the previous
 * one), so steps never reorder.
 */
export class Persister implements StepWriter {
  private buffered: AgentEvent[] = [];
  private readonly queue: Array<{ checkpoint: SessionCheckpoint; events: AgentEvent[] }> = [];
  private writing = false;
  private dirty = false;
  private idle: Array<() => void> = [];
  /** The version a durable approval request was first stored at (resolveApproval must quote it). */
  readonly approvals: ApprovalVersions;
  /** The first write that failed; later steps are not written (the session would be inconsistent). */
  failure: unknown = null;

  constructor(
    private readonly store: SessionStore,
    private readonly agent: AgentState,
    readonly sessionId: string,
    public version: number,
    private readonly onError: (error: unknown) => void,
  ) {
    this.approvals = { durable: !agent.options.approval, pending: null };
  }

  record(event: AgentEvent): void {
    this.buffered.push(event);
  }

  markDirty(): void {
    this.dirty = true;
  }

  flushStep(): void {
    if (this.dirty) this.step();
  }

  step(): void {
    this.dirty = false;
    this.version += 1;
    const checkpoint = checkpointOf(this.sessionId, this.version, this.agent, this.agent.run, this.approvals);
    const events = this.buffered;
    this.buffered = [];
    if (this.store.commitStepSync && !this.writing) {
      this.writeNow(checkpoint, events);
      return;
    }
    this.queue.push({ checkpoint, events });
    if (!this.writing) this.drain();
  }

  private writeNow(checkpoint: SessionCheckpoint, events: AgentEvent[]): void {
    if (this.failure) return;
    try {
      this.store.commitStepSync?.(this.sessionId, { checkpoint, events });
    } catch (error) {
      this.failure = error;
      this.onError(error);
    }
  }

  /** Resolves when every step so far is written. */
  flushed(): Promise<void> {
    if (!this.writing) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
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
        this.failure = error;
        this.onError(error);
        this.drain();
      },
    );
  }
}
