import { cloneCounters } from '../domain/counters.js';
import type { AgentEvent } from '../domain/events.js';
import { toolCallsOf, type Message } from '../domain/messages.js';
import type { RunCheckpoint, SessionCheckpoint, SessionStore, TurnCheckpoint } from '../store/types.js';
import type { AgentState, RunSession } from './run-session.js';

interface MasterView {
  steeringQueue: Message[];
  followUpQueue: Message[];
  pending: Message[];
  turnIndex: number;
  turnsThisRun: number;
  modelIndex: number;
}

/**
 * Writes one step per committed change: the events since the last step and a checkpoint, in
 * order. Embedded stores commit each step synchronously; an async store gets the steps one after
 * another (a write waits for the previous one), so steps never reorder.
 */
export class Persister {
  private buffered: AgentEvent[] = [];
  private readonly queue: Array<{ checkpoint: SessionCheckpoint; events: AgentEvent[] }> = [];
  private writing = false;
  private idle: Array<() => void> = [];
  /** The first write that failed; later steps are not written (the session would be inconsistent). */
  failure: unknown = null;

  constructor(
    private readonly store: SessionStore,
    readonly sessionId: string,
    public version: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  record(event: AgentEvent): void {
    this.buffered.push(event);
  }

  step(agent: AgentState, run: RunSession | null): void {
    this.version += 1;
    const checkpoint = buildCheckpoint(this.sessionId, this.version, agent, run);
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

function buildCheckpoint(sessionId: string, version: number, agent: AgentState, run: RunSession | null): SessionCheckpoint {
  const master = run?.master?.getSnapshot().context as MasterView | undefined;
  // Between a turnEnd and the master's decision the master has not advanced its turn index yet.
  const closedAhead = run?.lastClosedTurn != null && master !== undefined && run.lastClosedTurn >= master.turnIndex;
  return {
    sessionId,
    version,
    history: agent.history.slice(),
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
      ? { toolCallId: turn.pendingApproval.toolCallId, toolName: turn.pendingApproval.toolName, arguments: turn.pendingApproval.arguments, version: turn.pendingApproval.version }
      : null,
    committed,
  };
}

/** Whether a committed reply asks for more work (its tool calls), for resuming between turns. */
export function replyHadToolCalls(checkpoint: TurnCheckpoint): boolean {
  return checkpoint.reply !== null && toolCallsOf(checkpoint.reply.message).length > 0;
}
