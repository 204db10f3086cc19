import type { Subscription } from 'rxjs';
import type { AgentEvent, AgentEventOf } from '../domain/events.js';
import type { AgentRun } from '../runtime/agent.js';
import type { PendingApproval } from '../store/types.js';
import type { ApprovalRef } from './approval-id.js';
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
  private draining = false;
  private subscription: Subscription | null = null;
  private finished = false;
  /** Durable approvals requested in this feed (the run parks once every pending one is among them). */
  private readonly requested = new Set<string>();
  private readonly afterSeq: number;

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
    this.translator = new RunTranslator(dialect, (chunk) => this.target?.(chunk));
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

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.queue.length > 0 && !this.finished) {
        const event = this.queue.shift() as AgentEvent;
        if (event.type !== 'toolApprovalRequested') this.handle(event);
        else if (event.seq <= this.afterSeq) this.handle(event, this.answeredRequest(event));
        else if (this.approvals) await this.approvalRequested(event);
        else this.handle(event);
      }
    } catch (error) {
      this.stop();
      this.hooks.failed(error);
    } finally {
      this.draining = false;
    }
  }

  private handle(event: AgentEvent, durable?: DurableApproval): void {
    this.hooks.beforeEvent?.(event);
    this.translator.muted = this.target === null || event.seq <= this.afterSeq;
    this.translator.translate(event, durable);
    if (event.type === 'agentEnd') {
      this.stop();
      this.hooks.ended();
    }
  }

  /** A request the client has seen and answered: its id as the client quotes it. */
  private answeredRequest(event: AgentEventOf<'toolApprovalRequested'>): DurableApproval | undefined {
    const ref = this.answered.find((answer) => answer.toolCallId === event.toolCallId && answer.seq === event.seq);
    return ref ? { version: ref.version } : undefined;
  }

  /** A request the user answers carries the version its step was stored at: known once that step is written. */
  private async approvalRequested(event: AgentEventOf<'toolApprovalRequested'>): Promise<void> {
    const approvals = this.approvals as ApprovalSource;
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
