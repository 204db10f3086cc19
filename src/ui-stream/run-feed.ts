import type { Subscription } from 'rxjs';
import type { AgentEvent, AgentEventOf } from '../domain/events.js';
import type { AgentRun } from '../runtime/agent.js';
import type { PendingApproval } from '../store/types.js';
import { approvalIdOf, type ApprovalRef } from './approval-id.js';
import type { UIStreamDialect } from './sdk.js';
import { RunTranslator, type DurableApproval } from './translate.js';
import type { AgentchartUIChunk } from './types.js';

/** What the feed needs of the run's agent to tell a durable approval (the user answers it) from a handler's. */
export interface ApprovalSource {
  pendingApprovals(): PendingApproval[];
  flush(): Promise<void>;
}

export interface FeedHooks {
  /** Before an event is translated: the chat hands the rest of a run to another response here. */
  beforeEvent?(event: AgentEvent): void;
  /** Every durable approval the run waits for is on the client's screen: the run waits for the user. */
  parked(runId: string): void;
  /** agentEnd was translated (its finish chunk written). */
  ended(): void;
  /** A bug of ours while translating: the response ends with it. */
  failed(error: unknown): void;
}

/**
 * Follows one run's events (the run's replay, then live) through a translator, in order. Chunks
 * go to the current target; with none (between two responses of a chat) the translator keeps
 * its state, muted, so the response that continues the run writes only what follows.
 */
export class RunFeed {
  readonly translator: RunTranslator;
  private target: ((chunk: AgentchartUIChunk) => void) | null = null;
  private readonly queue: AgentEvent[] = [];
  private busy = false;
  private drained: Promise<void> = Promise.resolve();
  private subscription: Subscription | null = null;
  private finished = false;
  /** Durable approvals requested in this feed (the run parks once every pending one is among them). */
  private readonly requested = new Set<string>();
  private readonly afterSeq: number;
  /** The event being translated is on the client's screen already, or no response takes it. */
  private muted = false;

  constructor(
    dialect: UIStreamDialect,
    private readonly approvals: ApprovalSource | undefined,
    private readonly hooks: FeedHooks,
    /**
     * The approvals the client answered, when this feed continues its message: events up to the
     * last of these requests are on its screen already (followed muted, the requests with the ids
     * the client quotes).
     */
    private readonly answered: readonly ApprovalRef[] = [],
  ) {
    this.afterSeq = Math.max(-1, ...answered.map((ref) => ref.seq));
    this.translator = new RunTranslator(dialect, (chunk) => {
      if (!this.muted) this.target?.(chunk);
    });
    for (const ref of answered) this.translator.answered(ref.toolCallId, approvalIdOf(ref));
  }

  /** Follows the run from its first event (a late subscriber gets the run so far replayed), writing to `target`. */
  start(run: AgentRun, target: ((chunk: AgentchartUIChunk) => void) | null): this {
    this.target = target;
    this.subscription = run.events.subscribe({
      next: (event) => {
        this.queue.push(event);
        void this.drain();
      },
    });
    // A run that ended before now was replayed whole inside subscribe().
    if (this.finished) this.stop();
    return this;
  }

  setTarget(write: ((chunk: AgentchartUIChunk) => void) | null): void {
    this.target = write;
  }

  stop(): void {
    this.finished = true;
    this.queue.length = 0;
    this.subscription?.unsubscribe();
    this.subscription = null;
  }

  /** Resolves once every event received so far is translated. */
  async idle(): Promise<void> {
    while (this.busy) await this.drained;
  }

  get ended(): boolean {
    return this.finished;
  }

  private drain(): void {
    if (!this.busy) this.drained = this.drainQueue();
  }

  /** In order; synchronous unless an approval's version must be waited for (later events queue behind it). */
  private async drainQueue(): Promise<void> {
    this.busy = true;
    try {
      while (this.queue.length > 0 && !this.finished) {
        const event = this.queue.shift() as AgentEvent;
        if (event.type !== 'toolApprovalRequested') this.handle(event);
        else await this.approvalRequested(event);
      }
    } catch (error) {
      this.stop();
      this.hooks.failed(error);
    } finally {
      this.busy = false;
    }
  }

  private handle(event: AgentEvent, durable?: DurableApproval, onScreen = false): void {
    this.hooks.beforeEvent?.(event);
    this.muted = onScreen || this.target === null || event.seq <= this.afterSeq;
    this.translator.translate(event, durable);
    if (event.type === 'agentEnd') {
      this.stop();
      this.hooks.ended();
    }
  }

  /**
   * A request the user answers carries the version its step was stored at: known once that step is
   * written. One the client answered already (also asked again by a run resumed after a restart)
   * keeps the id the client quotes, and is not written again.
   */
  private async approvalRequested(event: AgentEventOf<'toolApprovalRequested'>): Promise<void> {
    const answered = this.answered.find((ref) => ref.toolCallId === event.toolCallId);
    if (answered) return this.handle(event, { version: answered.version }, true);
    const approvals = this.approvals;
    if (!approvals || event.seq <= this.afterSeq) return this.handle(event);
    const waiting = await approvals.flush().then(
      () => approvals.pendingApprovals().filter((pending) => !pending.elicitation),
      () => [],
    );
    const pending = waiting.find((approval) => approval.toolCallId === event.toolCallId);
    this.handle(event, pending ? { version: pending.version } : undefined);
    if (!pending) return;
    this.requested.add(event.toolCallId);
    if (!this.finished && waiting.every((approval) => this.requested.has(approval.toolCallId))) {
      this.hooks.parked(event.runId);
    }
  }
}
