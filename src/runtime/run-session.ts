import type { Observable } from 'rxjs';
import type { AnyActorRef } from 'xstate';
import type { RunResult } from '../domain/outcomes.js';
import type { MasterContext } from '../../machines/master.types.js';
import type { ModelReply } from '../../machines/turn.types.js';
import type { ApprovalDecision } from '../policies/types.js';
import type { PendingApproval } from '../store/types.js';
import type { LeaseKeeper } from './lease.js';
import type { Persister } from './persistence.js';
import type { ContextGuard } from '../context/guard.js';
import type { Counters } from '../domain/counters.js';
import { cloneCounters } from '../domain/counters.js';
import type { AgentEvent, AgentEventBody, MessageDelta, PolicySlot } from '../domain/events.js';
import { toolCallsOf, type AssistantMessage, type Message, type ToolResultMessage } from '../domain/messages.js';
import type { StreamAccumulator } from '../model/accumulator.js';
import type { Model } from '../model/port.js';
import type { TransformRejection } from '../context/guard.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolSourceFollower } from './tool-sources.js';
import { CounterLedger } from './counter-ledger.js';
import { AgentEventFeed, DEFAULT_REPLAY_BUFFER, RunEventLog } from './event-stream.js';
import { eventWithView, type ContextView, type SessionHistory } from './history.js';
import type { EffectHost } from './effects.js';
import type { AgentOptions, ResolvedOptions } from './options.js';
import { errorMessage } from './policy-runner.js';
import { systemClock, type RuntimeClock } from './timers.js';

/** Why the runtime ended a run: its store failed, or another agent took the session over. */
export interface RunStop {
  code: 'storeFailed' | 'sessionLost';
  message: string;
}

/** Where a queued message came from, so its delivery is counted and its receipt resolved. */
export type MessageSource = 'steering' | 'followUp';

export interface SteerReceipt {
  status: 'delivered' | 'stillQueued';
  turnIndex?: number;
}

/** State of the turn in progress; reset at every fresh turn. */
export interface TurnScope {
  turnIndex: number;
  open: boolean;
  /** messageUpdate deltas of the current attempt, published only once the attempt is final. */
  deltas: MessageDelta[];
  /** Live streaming published this attempt's messageStart (its deltas go out as they arrive). */
  messageOpen: boolean;
  /** The reply published for this turn (a resumed turn continues from it). */
  reply: ModelReply | null;
  /** Results whose toolExecutionEnd has been published, by call id: what was published is what is committed. */
  announcedEnds: Map<string, ToolResultMessage>;
  /** Calls whose toolExecutionStart was published (a resumed 'safe' re-run does not announce twice). */
  started: Set<string>;
  /** Approval requests published, and calls approved, in this turn. */
  requested: Set<string>;
  approved: Set<string>;
  /** A durable approval waiting for `resolveApproval`. */
  pendingApproval: (PendingApproval & { decide: (decision: ApprovalDecision) => void; early: ApprovalDecision | null }) | null;
  /** The compacted view an overflow recovery prepared for the re-run attempt. */
  overflowView: Message[] | null;
  /** History length before the turn's reply was committed (report mode discards a failed reply). */
  replyStart: number;
  /** Resolves the approval request in progress as denied (abort); null when none is pending. */
  denyPendingApproval: (() => void) | null;
  /** The assistant message the turn committed (post-turn policies may replace it). */
  committedAssistant: AssistantMessage | null;
  /** The attempt being streamed: what it received so far closes a live message after an internal error. */
  stream: StreamAccumulator | null;
  /**
   * steer() was accepted during this turn. The chart decides what it means (STEERING_ARRIVED); the
   * effects read it only to start nothing new in the step where the event is still in the turn's
   * mailbox (a steer from a subscriber of the step that publishes the reply).
   */
  steeringAccepted: boolean;
}

export function newTurnScope(turnIndex: number, open: boolean, historyLength: number): TurnScope {
  return {
    turnIndex,
    open,
    deltas: [],
    messageOpen: false,
    reply: null,
    announcedEnds: new Map(),
    started: new Set(),
    requested: new Set(),
    approved: new Set(),
    pendingApproval: null,
    overflowView: null,
    replyStart: historyLength,
    denyPendingApproval: null,
    committedAssistant: null,
    stream: null,
    steeringAccepted: false,
  };
}

/** Everything one agent keeps between runs. */
export interface AgentState {
  readonly options: AgentOptions;
  readonly resolved: ResolvedOptions;
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
  steeringQueue: Message[];
  followUpQueue: Message[];
  turnIndex: number;
  /** Where each queued message came from (counted on delivery), by message identity. */
  readonly sources: WeakMap<Message, MessageSource>;
  /** Pending steer()/followUp() receipts, by message identity. */
  readonly receipts: Map<Message, (receipt: SteerReceipt) => void>;
  /** Sent to the master but not yet taken by it: if the master ends first, they go back to the queues. */
  readonly unacknowledged: Map<Message, MessageSource>;
  run: RunSession | null;
  /** Checkpoints every committed step when the agent has a store. */
  persister: Persister | null;
  /** The agent's lease on its session (with a store). */
  lease: LeaseKeeper | null;
  /** A durable-execution engine that journals the run's effects (agentchart/restate), or null. */
  readonly host: EffectHost | null;
  /** While an ended run waits for its last step to be written: abort() stops the wait. */
  cutFinalWrite: (() => void) | null;
}

let runCounter = 0;

/** Steps after which the session is checkpointed (with the events since the last step). */
const CHECKPOINTED_EVENTS: ReadonlySet<AgentEvent['type']> = new Set([
  'agentStart',
  'messageEnd',
  'toolApprovalRequested',
  'toolApprovalResolved',
  'toolExecutionStart',
  'toolExecutionEnd',
  'turnEnd',
  'retry',
  'modelFallback',
  'contextCompacted',
]);

/** One run of an agent: its event log, seq, abort signal and the turn in progress. */
export class RunSession {
  readonly runId: string;
  readonly log: RunEventLog;
  readonly ledger: CounterLedger;
  readonly controller = new AbortController();
  modelIndex = 0;
  turn: TurnScope = newTurnScope(0, false, 0);
  /** The master actor, read for queues and pending messages when checkpointing. */
  master: AnyActorRef | null = null;
  /** The run's result promise and event stream, as handed to the caller. */
  handle: { result: Promise<RunResult>; events: Observable<AgentEvent> } | null = null;
  private seq: number;
  /** After agentEnd nothing more is published: a late callback cannot break "agentEnd is last". */
  ended = false;
  /** Set when the run starts ending: steer()/followUp() from then on go to the agent's queues. */
  closing = false;
  /**
   * Set when the runtime, not the chart, ends the run (DESIGN §11): a step could not be written, or
   * a newer lease fenced this agent. The run ends at once as `failed` / `fatalError` with this error.
   */
  stopped: RunStop | null = null;
  /** Ends the run: publishes agentEnd and resolves the run's result (set by createAgent). */
  finish: (context: MasterContext) => void = () => {};

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
    this.stopped = reason;
    this.controller.abort(reason.message);
    this.master?.send({ type: 'ABORT' });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get model(): Model {
    return this.agent.resolved.models[this.modelIndex] as Model;
  }

  /**
   * Events of a message being published (messageStart … messageEnd), held back from the store until
   * its messageEnd: a checkpoint taken meanwhile (a steer during a live stream) must not store a
   * half-published attempt, or a crash would leave two messageStarts for one message.
   */
  private held: AgentEvent[] | null = null;

  /** Publishes an event; `view` backs a `messages` field (beforeModelCall, agentEnd) instead of a copy. */
  emit(body: AgentEventBody, view?: ContextView): AgentEvent | null {
    if (this.ended) return null;
    const fields = { ...body, runId: this.runId, seq: this.seq++ };
    const event = view && 'messages' in fields ? eventWithView<AgentEvent>(fields, view) : (fields as AgentEvent);
    this.ledger.observe(event);
    if (event.type === 'messageStart') this.held = [];
    if (this.held) {
      this.held.push(event);
      if (event.type === 'messageEnd') this.releaseHeld();
    } else {
      this.agent.persister?.record(event, this.agent, this);
    }
    this.log.push(event);
    this.agent.feed.push(event);
    if (CHECKPOINTED_EVENTS.has(event.type)) this.checkpoint();
    return event;
  }

  private releaseHeld(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const event of held) this.agent.persister?.record(event, this.agent, this);
  }

  /** The seq the stored log continues from: held events are not stored yet. */
  get nextSeq(): number {
    return this.held?.[0]?.seq ?? this.seq;
  }

  /** Steering that interrupts was accepted in this turn: effects start no further tool call or approval request. */
  get steeringInterrupts(): boolean {
    return this.turn.steeringAccepted && this.agent.resolved.steeringInterrupts;
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

  /** Persists the committed step (no-op without a store). */
  checkpoint(): void {
    this.agent.persister?.step(this.agent, this);
  }

  /** A context transform whose output was refused: reported, and the default compaction is used. */
  reportTransformRejection(rejection: TransformRejection): void {
    const detail = rejection.violations.length > 0 ? `: ${rejection.violations.slice(0, 3).join('; ')}` : '';
    const message = `${rejection.reason}${detail}; the default compaction was used`;
    this.reportPolicyError('contextTransform', new Error(message));
  }

  /** Awaits user code outside any journaled step (a durable host waits for it before it waits for the engine). */
  awaitUser<T>(work: Promise<T>): Promise<T> {
    return this.agent.host ? this.agent.host.track(work) : work;
  }

  reportPolicyError(slot: PolicySlot, error: unknown): void {
    this.emit({ type: 'policyError', slot, message: errorMessage(error), ...(this.turn.open ? { turnIndex: this.turn.turnIndex } : {}) });
  }

  /** The index of the last turn this run closed (its turnEnd published), or null. */
  lastClosedTurn: number | null = null;

  /** Marks the turn closed; done before turnEnd is published, so that step's checkpoint sees it closed. */
  closeTurn(): void {
    this.turn.open = false;
    this.lastClosedTurn = this.turn.turnIndex;
  }

  startTurn(turnIndex: number, input: readonly Message[] = []): void {
    // Between turns only: a turn sees one tool list from its first model call to its last result.
    const change = this.agent.toolSources.next(this.agent.registry);
    if (change) {
      this.agent.registry = change.registry;
      this.emit({ type: 'toolsChanged', added: change.added, removed: change.removed, updated: change.updated });
    }
    this.turn = newTurnScope(turnIndex, true, this.agent.history.length);
    const steeringDelivered = input.filter((message) => this.agent.sources.get(message) === 'steering').length;
    this.emit({ type: 'turnStart', turnIndex, ...(steeringDelivered > 0 ? { steeringDelivered } : {}) });
  }

  /** Appends messages to the agent's history, resolving steer()/followUp() receipts (delivered in `turnIndex`). */
  commit(messages: readonly Message[], turnIndex = this.turn.turnIndex): void {
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
    this.checkpoint();
  }

  /** A delta of the current attempt: buffered, or published at once when streaming live. */
  streamDelta(delta: MessageDelta, modelName: string): void {
    if (this.agent.options.streaming !== 'live') {
      this.turn.deltas.push(delta);
      return;
    }
    if (!this.turn.messageOpen) this.openMessage(modelName);
    this.emit({ type: 'messageUpdate', turnIndex: this.turn.turnIndex, delta });
  }

  private openMessage(modelName: string | undefined): void {
    this.turn.messageOpen = true;
    this.emit({ type: 'messageStart', turnIndex: this.turn.turnIndex, message: { role: 'assistant', content: [], stopReason: 'stop', model: modelName } as AssistantMessage });
  }

  /**
   * Publishes an assistant message once per logical message: start, the buffered deltas, end (with
   * the attempt's error). The reply is recorded as the turn's published reply just before
   * messageEnd (the step a checkpoint may store), never earlier.
   */
  publishAssistant(message: AssistantMessage, reply: ModelReply | null = null): void {
    const turnIndex = this.turn.turnIndex;
    if (!this.turn.messageOpen) this.openMessage(message.model);
    for (const delta of this.turn.deltas) this.emit({ type: 'messageUpdate', turnIndex, delta });
    this.turn.deltas = [];
    this.turn.messageOpen = false;
    if (reply) this.turn.reply = reply;
    const error = reply?.error;
    this.emit({ type: 'messageEnd', turnIndex, message, ...(error ? { error } : {}) });
  }

  announceToolEnd(result: ToolResultMessage): void {
    if (this.turn.announcedEnds.has(result.toolCallId)) return;
    this.turn.announcedEnds.set(result.toolCallId, result);
    this.emit({ type: 'toolExecutionEnd', turnIndex: this.turn.turnIndex, toolCallId: result.toolCallId, toolName: result.toolName, result: result.content, isError: result.isError });
  }

  /** Closes a turn left open by a deferred failure: an empty aborted message, committed, then turnEnd(aborted). */
  closeTurnAsAborted(): void {
    if (!this.turn.open) return;
    const message: AssistantMessage = { role: 'assistant', content: [], stopReason: 'aborted', model: this.model.name };
    this.turn.deltas = [];
    this.publishAssistant(message);
    this.commit([message]);
    this.closeTurn();
    this.emit({ type: 'turnEnd', turnIndex: this.turn.turnIndex, reason: 'aborted', assistant: message, toolResults: [] });
  }

  /**
   * After an internal error (a throw inside an effect or a machine action), keeps the log whole
   * (DESIGN §9): the turn's input is committed, a half-published message is ended, a published
   * reply is committed with one result per tool call, and the open turn gets its turnEnd. A reply
   * already published is never replaced, and no second messageStart is emitted.
   */
  closeAfterInternalError(input: readonly Message[], detail: string): void {
    const unsaved = notIn(this.agent.history, input);
    if (unsaved.length > 0) this.commit(unsaved);
    if (!this.turn.open) return;
    const turn = this.turn;
    const errorMessage = `internal error: ${detail}`;
    if (turn.messageOpen && turn.committedAssistant === null) {
      // A live message cut by the error: what was streamed is its content, with stopReason error.
      const streamed = turn.stream?.abort(errorMessage);
      const base = streamed ?? { role: 'assistant', content: [], model: this.model.name };
      const message: AssistantMessage = { ...base, stopReason: 'error', errorMessage };
      this.publishAssistant(message, { called: true, published: true, message, error: null, invalidCalls: [] });
    }
    let results: ToolResultMessage[] = [];
    const assistant = turn.committedAssistant ?? turn.reply?.message ?? null;
    if (turn.committedAssistant === null && assistant) {
      const notRun = (call: { id: string; name: string }): ToolResultMessage => ({
        role: 'toolResult',
        toolCallId: call.id,
        toolName: call.name,
        content: `not run: ${errorMessage}`,
        isError: true,
      });
      results = toolCallsOf(assistant).map((call) => turn.announcedEnds.get(call.id) ?? notRun(call));
      for (const result of results) this.announceToolEnd(result);
      turn.committedAssistant = assistant;
      this.commit([assistant, ...results]);
    } else if (assistant) {
      results = toolCallsOf(assistant).flatMap((call) => turn.announcedEnds.get(call.id) ?? []);
    }
    this.closeTurn();
    this.emit({ type: 'turnEnd', turnIndex: turn.turnIndex, reason: 'error', assistant, toolResults: results });
  }

  countersSnapshot(): Counters {
    return cloneCounters(this.agent.counters);
  }
}

/** The messages of `candidates` not in `history` (by identity), in order. */
function notIn(history: readonly Message[], candidates: readonly Message[]): Message[] {
  if (candidates.length === 0) return [];
  const present = new Set<Message>(history);
  return candidates.filter((message) => !present.has(message));
}
