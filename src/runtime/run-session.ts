import type { Observable } from 'rxjs';
import type { AnyActorRef } from 'xstate';
import type { RunResult } from '../domain/outcomes.js';
import type { MasterOutput, RunStopError } from '../../machines/master.types.js';
import type { ContextGuard } from '../context/guard.js';
import type { Counters } from '../domain/counters.js';
import { cloneCounters } from '../domain/counters.js';
import type { AgentEvent, AgentEventBody, MessageDelta, PolicySlot } from '../domain/events.js';
import type { AssistantMessage, Message } from '../domain/messages.js';
import type { StreamAccumulator } from '../model/accumulator.js';
import type { Model } from '../model/port.js';
import type { TransformRejection } from '../context/guard.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolSourceFollower } from './tool-sources.js';
import { CounterLedger } from './counter-ledger.js';
import { AgentEventFeed, DEFAULT_REPLAY_BUFFER, RunEventLog } from './event-stream.js';
import { eventWithView, type ContextView, type SessionHistory } from './history.js';
import type { EffectHost } from './effects.js';
import type { PendingElicitation } from './elicitation.js';
import { parkIfWaiting, type Parked } from './parking.js';
import type { SessionAccess } from './session-access.js';
import type { RunCheckpoint } from '../store/types.js';
import type { AgentOptions, ResolvedOptions } from './options.js';
import { errorMessage } from './policy-runner.js';
import { systemClock, type RuntimeClock } from './timers.js';
import { StepBoundary } from './step-boundary.js';

/** Why the runtime ended a run: its store failed, or another agent took the session over. */
export type RunStop = RunStopError;

/** Where a queued message came from, so its delivery is counted and its receipt resolved. */
export type MessageSource = 'steering' | 'followUp';

/**
 * What `steer()` and `followUp()` resolve with: the message was delivered to a turn, or was still queued when the run
 * ended.
 */
export interface SteerReceipt {
  /** 'delivered' once the message is committed to the history; 'stillQueued' if the run ended first. */
  status: 'delivered' | 'stillQueued';
  /** The turn it was delivered to. */
  turnIndex?: number;
}

/** Writes the session's steps; persistence.ts implements it (the run only tells it when something changed). */
export interface StepWriter {
  readonly sessionId: string;
  /** The store's version of the last step taken. */
  readonly version: number;
  /** The session was reloaded at `version`: the next step follows it. */
  rebase(version: number): void;
  record(event: AgentEvent): void;
  /** Something durable changed (an event, history, a queue): the next step boundary writes a step. */
  markDirty(): void;
  /** Writes a step now if anything changed since the last one. */
  flushStep(): void;
  /** Writes a step now (between runs: the queues changed); its version, or null when nothing was written. */
  step(): number | null;
  /**
   * Publishes once `after` is written: an event (once the step holding it is written), a step's
   * version, or null (nothing of its own to wait for). In order: nothing overtakes what came before.
   */
  publishWhenWritten(publish: () => void, after: AgentEvent | number | null): void;
  /** A write is in flight (an async store). */
  readonly busy: boolean;
  /** Resolves when every step so far is written or the store failed (never rejects). */
  settled(): Promise<void>;
  /** The first failed write: nothing is written after it. */
  readonly failure: Error | null;
  /** The fencing token every step carries (null: the store is used without a lease). */
  token: number | null;
  /** Ends writing after a failure (a failed lease renewal, a refused step). */
  fail(error: unknown): void;
  /** The agent let the session go: nothing more is written. */
  detach(): void;
  /** The version each durable approval request was first stored at (resolveApproval must quote it). */
  readonly approvals: { readonly durable: boolean; pending: import('../store/types.js').PendingApproval[] };
  flushed(): Promise<void>;
}

/** The session's state no run holds: its queues and turn index, and a run the store holds unfinished. */
export interface BetweenRuns {
  steeringQueue: Message[];
  followUpQueue: Message[];
  turnIndex: number;
  /**
   * The run the stored session holds, not running here: parked at a durable approval (whoever answers
   * continues it) or interrupted by a crash (resumed as soon as the lease is taken).
   */
  run: RunCheckpoint | null;
}

/** Everything one agent keeps between runs. */
export interface AgentState {
  readonly options: AgentOptions;
  readonly resolved: ResolvedOptions;
  /** The session's id (or, without a store, one made for the agent): what idempotency keys name. */
  readonly sessionKey: string;
  /** Replaced only at a turn's start, when a tool source (e.g. an MCP server) changed its list. */
  registry: ToolRegistry;
  readonly toolSources: ToolSourceFollower;
  /** Compacts on overflow; also before every call when the `context` option is set. */
  readonly guard: ContextGuard;
  /** The history's storage: appends, views for events, changes for the store. */
  readonly log: SessionHistory;
  /** The history as an array (the log's current one: read it, change it through `log`). */
  readonly history: Message[];
  readonly counters: Counters;
  readonly feed: AgentEventFeed;
  /**
   * The session between runs; null while a run's master holds its queues and turn index (one owner
   * at a time: `sessionView` reads whichever holds them).
   */
  between: BetweenRuns | null;
  /** Where each queued message came from (counted on delivery), by message identity. */
  readonly sources: WeakMap<Message, MessageSource>;
  /** Pending steer()/followUp() receipts, by message identity. */
  readonly receipts: Map<Message, (receipt: SteerReceipt) => void>;
  run: RunSession | null;
  /** Checkpoints every committed step when the agent has a store. */
  persister: StepWriter | null;
  /** The session's lease and stored version, taken for each run and each write between runs (with a store). */
  access: SessionAccess | null;
  /** A durable-execution engine that journals the run's effects (agentchart/restate), or null. */
  readonly host: EffectHost | null;
  /** While an ended run waits for its last step to be written: abort() stops the wait. */
  cutFinalWrite: (() => void) | null;
}

/**
 * The model attempt being streamed, live: what the effect that reads the stream owns (like an open
 * HTTP body). Only a run cut by an internal error reads it, to end a message it had started.
 */
export interface LiveAttempt {
  /** Live streaming published this attempt's messageStart. */
  open: boolean;
  accumulator: StreamAccumulator | null;
}

let runCounter = 0;

/** Seqs reserved in the store at a time for ephemeral events (one step per this many). */
export const SEQ_RESERVATION = 256;

/** One run of an agent: its event log, seq, abort signal and the actors it runs. */
export class RunSession {
  readonly runId: string;
  readonly log: RunEventLog;
  readonly ledger: CounterLedger;
  readonly controller = new AbortController();
  /** The master actor: every state of the run is read from it (and its turn and tool-call children). */
  master: AnyActorRef | null = null;
  /** The run's result promise and event stream, as handed to the caller. */
  handle: { result: Promise<RunResult>; events: Observable<AgentEvent> } | null = null;
  live: LiveAttempt | null = null;
  /**
   * The tool-call actors of the turn in progress (by the turn actor's session id), for what reads
   * them from outside the chart: the checkpoint (a call that ended before the turn took its result)
   * and the net after an internal error. Dropped at the next turn.
   */
  callActors: { turn: string; actors: AnyActorRef[] } = { turn: '', actors: [] };
  /** Questions of running calls waiting for `resolveApproval` (elicitation.ts), by tool call id. */
  readonly elicitations = new Map<string, PendingElicitation>();
  /**
   * Calls with a question out (published, not yet resolved), whatever answers it: a checkpoint records them.
   * The tool asks from inside its execution, where no chart sees it.
   */
  readonly openQuestions = new Set<string>();
  /** Machine actions of this run in progress (see `runAction`): no step is written in their middle. */
  actionDepth = 0;
  /** Work a step began (tool starts, approval requests) begins once the step is over. */
  readonly boundary = new StepBoundary(() => (this.agent.persister?.busy ? this.agent.persister.settled() : null));
  private seq: number;
  /**
   * After agentEnd nothing more is published: a late callback cannot break "agentEnd is last". Not
   * read from the master: a run refused, unstarted or moved on ends with no master to read.
   */
  ended = false;
  /**
   * Set when the run starts ending: steer()/followUp() from then on go to the agent's queues. Not
   * read from the master: it is set inside the master's last step (an internal error closing the
   * turn, agentEnd), while its snapshot still shows the step before.
   */
  closing = false;
  /**
   * The runtime stopped the run (store failures are fatal): a step could not be written, or a newer lease fenced
   * this agent. It is sent once, as STOP: the chart ends the run `failed` / `fatalError` with its error.
   */
  stopped = false;
  /** Ends the run: publishes agentEnd and resolves the run's result (set by the launcher). */
  finish: (end: MasterOutput) => void = () => {};
  /** A run that never started: the store refused it (SessionBusy, …); its result rejects with the error. */
  refuse: (error: unknown) => void = () => {};
  /** A run that never started and ends quietly (aborted before the lease was taken). */
  settleUnstarted: (result: RunResult) => void = () => {};
  /** Another agent continues this (parked) run: its result says so; its events end here. */
  moveOn: (result: RunResult) => void = () => {};
  /** Parked at a durable approval: the lease is given up until this agent takes the run back (parking.ts). */
  parked: Parked | null = null;
  /** Resolves once the master started (or the run was refused): what arrives meanwhile waits for it. */
  readonly launched = deferredVoid();

  constructor(
    readonly agent: AgentState,
    /** Where throws of subscribers and of the inspection observer go (never the run). */
    readonly reportSubscriberError: (error: unknown) => void,
    resumed?: { runId: string; nextSeq: number },
  ) {
    runCounter += 1;
    this.runId =
      resumed?.runId ?? agent.host?.newRunId() ?? `run_${Date.now().toString(36)}_${runCounter.toString(36)}`;
    this.seq = resumed?.nextSeq ?? 0;
    this.log = new RunEventLog(reportSubscriberError, agent.options.replayBuffer ?? DEFAULT_REPLAY_BUFFER);
    this.ledger = new CounterLedger(agent.counters);
  }

  /** Ends the run at once: every unfinished call is aborted (none starts), the chart closes the turn. */
  stop(reason: RunStop): void {
    if (this.ended || this.stopped) return;
    this.stopped = true;
    this.controller.abort(reason.message);
    this.master?.send({ type: 'STOP', error: reason });
  }

  /** Parks the run if it waits for a durable approval and all of it is stored (what the approval effect asks). */
  parkIfWaiting(): void {
    parkIfWaiting(this);
  }

  /** A resumed run continues the stored seq (known once the session is loaded under the lease). */
  continueAt(nextSeq: number): void {
    this.seq = nextSeq;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  modelAt(index: number): Model {
    return this.agent.resolved.models[index] as Model;
  }

  /**
   * Events of a message being published (messageStart … messageEnd), held back from the store until
   * its messageEnd: a checkpoint taken meanwhile (a steer during a live stream) must not store a
   * half-published attempt, or a crash would leave two messageStarts for one message.
   */
  private held: AgentEvent[] | null = null;

  /**
   * Publishes an event; `view` backs a `messages` field (beforeModelCall, agentEnd) instead of a
   * copy. With a store, a lifecycle event reaches subscribers only once the step holding it is
   * written (what a subscriber saw survives a crash). `ephemeral` events — progress updates and a
   * live stream's messageStart and deltas — are published at once and stored later (a crash may
   * lose them); their seqs are reserved in the store ahead of them, so a resumed run never reuses
   * a seq a subscriber saw.
   */
  emit(body: AgentEventBody, view?: ContextView, ephemeral = false): AgentEvent | null {
    if (this.ended) return null;
    // Completed in place, not copied: every caller passes a body literal of its own, which becomes the event.
    const fields = body as AgentEventBody & { runId: string; seq: number };
    fields.runId = this.runId;
    fields.seq = this.seq++;
    const event = view && 'messages' in fields ? eventWithView<AgentEvent>(fields, view) : (fields as AgentEvent);
    return this.dispatch(event, ephemeral);
  }

  /** Counts, stores and publishes an event whose runId and seq are set. */
  private dispatch(event: AgentEvent, ephemeral: boolean): AgentEvent {
    this.ledger.observe(event);
    const persister = this.agent.persister;
    if (!persister) {
      this.publish(event);
      return event;
    }
    this.persist(persister, event);
    const reservation = ephemeral && !this.agent.host ? this.reserveSeq(persister, event.seq) : null;
    persister.publishWhenWritten(() => this.publish(event), ephemeral ? reservation : event);
    if (!ephemeral) this.flushSoon(persister);
    return event;
  }

  private flushScheduled = false;

  /**
   * A step is written after each actor step; an event published outside one (by an effect's async
   * code: a model call's beforeModelCall, a policy's error) is written once the current task's
   * synchronous work is over — between steps, where the checkpoint reads a settled chart.
   */
  private flushSoon(persister: StepWriter): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => {
      this.flushScheduled = false;
      persister.flushStep();
    });
  }

  private publish(event: AgentEvent): void {
    this.log.push(event);
    this.agent.feed.push(event);
  }

  /** Closes the run's event stream after everything published before it. */
  closeEvents(): void {
    const persister = this.agent.persister;
    if (persister) persister.publishWhenWritten(() => this.log.close(), null);
    else this.log.close();
  }

  /** Seqs up to this one (excluded) are reserved in the store: a resumed run starts at or above it. */
  private reservedSeq = 0;

  /**
   * An ephemeral event past the reserved seqs reserves the next SEQ_RESERVATION in a step written
   * now; the event waits for that step (returned: its version), later ones up to the reservation do not.
   */
  private reserveSeq(persister: StepWriter, seq: number): number | null {
    if (seq < this.reservedSeq) return null;
    this.reservedSeq = seq + SEQ_RESERVATION;
    return persister.step();
  }

  private persist(persister: StepWriter, event: AgentEvent): void {
    if (event.type === 'messageStart') this.held = [];
    if (this.held) {
      this.held.push(event);
      if (event.type !== 'messageEnd') return;
      const held = this.held;
      this.held = null;
      for (const each of held) persister.record(each);
    } else {
      persister.record(event);
    }
    persister.markDirty();
  }

  /** The seq a resumed run continues from: past every seq published so far, and every seq reserved. */
  get nextSeq(): number {
    return Math.max(this.seq, this.reservedSeq);
  }

  /** The seq the next event gets (a durable host names its journaled steps by it). */
  get seqNow(): number {
    return this.seq;
  }

  /** The agent's clock (XState's): every runtime timer uses it, so tests run on a SimulatedClock. */
  get clock(): RuntimeClock {
    return (this.agent.options.clock as RuntimeClock | undefined) ?? systemClock;
  }

  /** The text given to `abort(reason)`, or 'aborted'. */
  get abortReason(): string {
    const reason: unknown = this.signal.reason;
    return typeof reason === 'string' && reason !== '' ? reason : 'aborted';
  }

  /** A context transform whose output was refused: reported, and the default compaction is used. */
  reportTransformRejection(rejection: TransformRejection, turnIndex?: number): void {
    const detail = rejection.violations.length > 0 ? `: ${rejection.violations.slice(0, 3).join('; ')}` : '';
    const message = `${rejection.reason}${detail}; the default compaction was used`;
    this.reportPolicyError('contextTransform', new Error(message), turnIndex);
  }

  /** Awaits user code outside any journaled step (a durable host waits for it before it waits for the engine). */
  awaitUser<T>(work: Promise<T>): Promise<T> {
    return this.agent.host ? this.agent.host.track(work) : work;
  }

  reportPolicyError(slot: PolicySlot, error: unknown, turnIndex?: number): void {
    this.emit({
      type: 'policyError',
      slot,
      message: errorMessage(error),
      ...(turnIndex !== undefined ? { turnIndex } : {}),
    });
  }

  /** Appends messages to the agent's history, resolving steer()/followUp() receipts (delivered in `turnIndex`). */
  commit(messages: readonly Message[], turnIndex: number): void {
    const { log, receipts, sources } = this.agent;
    for (const message of messages) {
      log.append(message);
      const source = sources.get(message);
      if (source === undefined) continue;
      sources.delete(message);
      this.ledger.increment(source === 'steering' ? 'steeringDelivered' : 'followUpsDelivered');
      receipts.get(message)?.({ status: 'delivered', turnIndex });
      receipts.delete(message);
    }
    this.agent.persister?.markDirty();
  }

  /** A delta of the current attempt, published at once when streaming live (else it travels with the reply). */
  streamLiveDelta(delta: MessageDelta, turnIndex: number, modelName: string): void {
    const live = this.live ?? (this.live = { open: false, accumulator: null });
    if (!live.open) {
      live.open = true;
      this.emit({ type: 'messageStart', turnIndex, message: emptyMessage(modelName) }, undefined, true);
    }
    // Built whole, as emit would build it: the most frequent event of a live stream is not copied.
    if (!this.ended)
      this.dispatch({ type: 'messageUpdate', turnIndex, delta, runId: this.runId, seq: this.seq++ }, true);
  }

  countersSnapshot(): Counters {
    return cloneCounters(this.agent.counters);
  }
}

function deferredVoid(): { promise: Promise<void>; resolve(): void } {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/** What a messageStart carries: the message as it begins. */
export function emptyMessage(modelName: string | undefined): AssistantMessage {
  return { role: 'assistant', content: [], stopReason: 'stop', model: modelName } as AssistantMessage;
}
