import type { AgentEvent } from '../domain/events.js';
import type { Agent, AgentRun, SteerReceipt } from '../runtime/agent.js';
import type { ApprovalRef } from './approval-id.js';
import type { ResponseSlot } from './response-slot.js';
import { RunFeed } from './run-feed.js';
import type { UIStreamDialect } from './sdk.js';

/** A steering request's response, waiting for the turn that takes its message. */
interface Waiting {
  slot: ResponseSlot;
  receipt: Promise<SteerReceipt>;
}

/**
 * A run of a chat in progress in this process, and the responses that carry it: the one that
 * started it, then a response that continues it (an approval answered), or the response to a
 * message the user sent meanwhile, which takes the run over from the turn that delivers it. The
 * agent is the handle of the request that started the run; it is let go when the run ends.
 */
export class ChatRun {
  private readonly feed: RunFeed;
  private current: ResponseSlot | null = null;
  private readonly waiting: Waiting[] = [];
  readonly done: Promise<void>;
  /** Following the run's events already. */
  started = false;
  /** The run parked and its handle is being let go: the next request of the chat takes a fresh one once it is. */
  private letGo: Promise<void> | null = null;

  constructor(
    readonly agent: Agent,
    readonly run: AgentRun,
    dialect: UIStreamDialect,
    answered: readonly ApprovalRef[],
    /** The run ended, or moved on to another handle: steering requests still waiting are passed on. */
    onEnd: (chatRun: ChatRun, waiting: Waiting[]) => Promise<void>,
  ) {
    let ended!: () => void;
    const feedEnded = new Promise<void>((resolve) => (ended = resolve));
    this.feed = new RunFeed(
      dialect,
      agent,
      {
        beforeEvent: (event) => this.handOver(event),
        parked: (runId) => {
          this.release((slot) => slot.finish(runId, 'awaitingApproval'));
          // The request is over: its handle lets the session go, with the run parked in the store
          // (its lease given up), for whichever handle answers — in this process or another.
          if (this.waiting.length > 0) return;
          this.letGo = agent.close().catch(() => undefined);
        },
        ended: () => {
          this.release((slot) => slot.end());
          ended();
        },
        failed: (error) => {
          this.release((slot) => slot.fail(error));
          ended();
        },
      },
      answered,
    );
    // A run refused before it started (the session taken meanwhile, the approval answered elsewhere): the response says why.
    run.result.catch((error: unknown) => this.release((slot) => slot.fail(error)));
    // A run that moved on to another handle (a parked run taken over) ends here without an agentEnd.
    // Events reach subscribers once their step is written: the last ones are in once the writes are.
    const movedOn = run.result
      .then(() => agent.flush())
      .catch(() => undefined)
      .then(() => new Promise((resolve) => setTimeout(resolve, 0)))
      .then(() => this.feed.idle());
    this.done = Promise.race([feedEnded, movedOn])
      .then(async () => {
        this.feed.stop();
        this.release((slot) => slot.end());
        // The lease of a handle let go is given up before the chat's next request takes the session.
        await this.letGo;
        await onEnd(this, this.waiting.splice(0));
      })
      // A failed close() (its store write) was the run's own result already; nothing waits on it here.
      .catch(() => undefined);
  }

  /** The response that carries the run from now on (the run's first, or one continuing after an approval). */
  carry(slot: ResponseSlot, messageId: string): void {
    this.current?.end();
    this.current = slot;
    slot.begin(messageId, this.run.runId);
    this.feed.setTarget((chunk) => this.current?.write(chunk));
  }

  /** Follows the run from its start (once a response carries it, or muted for a continuation yet to come). */
  start(): this {
    if (this.started) return this;
    this.started = true;
    this.feed.start(this.run, this.current ? (chunk) => this.current?.write(chunk) : null);
    return this;
  }

  /** A message the user sent while the run works: its response waits for the turn that takes it. */
  queue(slot: ResponseSlot, receipt: Promise<SteerReceipt>): void {
    this.waiting.push({ slot, receipt });
  }

  /** The run's end was translated, or its handle is let go: no response can take it any more. */
  get finished(): boolean {
    return this.feed.ended || this.letGo !== null;
  }

  /** A response that will not carry the run after all (its request was refused). */
  drop(slot: ResponseSlot): void {
    if (this.current !== slot) return;
    this.current = null;
    this.feed.setTarget(null);
    slot.end();
  }

  /** The user stopped the run (a response's request was aborted). */
  stop(): void {
    this.agent.abort('stopped by the user');
  }

  /**
   * A turn that delivers steering messages starts in the response of the last of them (they are
   * delivered in the order they were sent): the response so far ends `continued`.
   */
  private handOver(event: AgentEvent): void {
    if (event.type !== 'turnStart' || !event.steeringDelivered) return;
    const delivered = this.waiting.splice(0, event.steeringDelivered).filter((entry) => entry.slot.isOpen);
    const next = delivered.pop();
    for (const entry of delivered) entry.slot.end();
    if (!next) return;
    this.current?.finish(event.runId, 'continued');
    this.current = next.slot;
    next.slot.begin(`${event.runId}-${event.turnIndex}`, event.runId);
    this.feed.setTarget((chunk) => this.current?.write(chunk));
  }

  /** The current response ends; the run goes on with no response (muted) until one takes it. */
  private release(end: (slot: ResponseSlot) => void): void {
    const slot = this.current;
    this.current = null;
    this.feed.setTarget(null);
    if (slot?.isOpen) end(slot);
  }
}
