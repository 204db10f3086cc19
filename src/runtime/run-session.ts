import type { MasterContext } from '../../machines/master.types.js';
import type { ContextGuard } from '../context/guard.js';
import type { Counters } from '../domain/counters.js';
import { cloneCounters } from '../domain/counters.js';
import type { AgentEvent, AgentEventBody, MessageDelta, PolicySlot } from '../domain/events.js';
import type { AssistantMessage, Message, ToolResultMessage } from '../domain/messages.js';
import type { Model } from '../model/port.js';
import type { ToolRegistry } from '../tools/registry.js';
import { CounterLedger } from './counter-ledger.js';
import { AgentEventFeed, RunEventLog } from './event-stream.js';
import type { AgentOptions, ResolvedOptions } from './options.js';
import { errorMessage } from './policy-runner.js';

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
  /** Results whose toolExecutionEnd has been published, by call id: what was published is what is committed. */
  announcedEnds: Map<string, ToolResultMessage>;
  /** The compacted view an overflow recovery prepared for the re-run attempt. */
  overflowView: Message[] | null;
  /** History length before the turn's reply was committed (report mode discards a failed reply). */
  replyStart: number;
  /** Resolves the approval request in progress as denied (abort); null when none is pending. */
  denyPendingApproval: (() => void) | null;
  /** The assistant message the turn committed (post-turn policies may replace it). */
  committedAssistant: AssistantMessage | null;
}

/** Everything one agent keeps between runs. */
export interface AgentState {
  readonly options: AgentOptions;
  readonly resolved: ResolvedOptions;
  readonly registry: ToolRegistry;
  /** Compacts on overflow; also before every call when the `context` option is set. */
  readonly guard: ContextGuard;
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
  run: RunSession | null;
}

let runCounter = 0;

/** One run of an agent: its event log, seq, abort signal and the turn in progress. */
export class RunSession {
  readonly runId: string;
  readonly log: RunEventLog;
  readonly ledger: CounterLedger;
  readonly controller = new AbortController();
  modelIndex = 0;
  turn: TurnScope = { turnIndex: 0, open: false, deltas: [], announcedEnds: new Map(), overflowView: null, replyStart: 0, denyPendingApproval: null, committedAssistant: null };
  private seq = 0;
  /** After agentEnd nothing more is published: a late callback cannot break "agentEnd is last". */
  ended = false;
  /** Ends the run: publishes agentEnd and resolves the run's result (set by createAgent). */
  finish: (context: MasterContext) => void = () => {};

  constructor(
    readonly agent: AgentState,
    onSubscriberError: (error: unknown) => void,
  ) {
    runCounter += 1;
    this.runId = `run_${Date.now().toString(36)}_${runCounter.toString(36)}`;
    this.log = new RunEventLog(onSubscriberError);
    this.ledger = new CounterLedger(agent.counters);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get model(): Model {
    return this.agent.resolved.models[this.modelIndex] as Model;
  }

  emit(body: AgentEventBody): AgentEvent | null {
    if (this.ended) return null;
    const event = { ...body, runId: this.runId, seq: this.seq++ } as AgentEvent;
    this.ledger.observe(event);
    this.log.push(event);
    this.agent.feed.push(event);
    return event;
  }

  reportPolicyError(slot: PolicySlot, error: unknown): void {
    this.emit({ type: 'policyError', slot, message: errorMessage(error), ...(this.turn.open ? { turnIndex: this.turn.turnIndex } : {}) });
  }

  startTurn(turnIndex: number): void {
    this.turn = { turnIndex, open: true, deltas: [], announcedEnds: new Map(), overflowView: null, replyStart: this.agent.history.length, denyPendingApproval: null, committedAssistant: null };
    this.emit({ type: 'turnStart', turnIndex });
  }

  /** Appends messages to the agent's history, resolving steer()/followUp() receipts. */
  commit(messages: readonly Message[]): void {
    const { history, receipts, sources } = this.agent;
    for (const message of messages) {
      history.push(message);
      const source = sources.get(message);
      if (source === undefined) continue;
      sources.delete(message);
      this.ledger.increment(source === 'steering' ? 'steeringDelivered' : 'followUpsDelivered');
      receipts.get(message)?.({ status: 'delivered', turnIndex: this.turn.turnIndex });
      receipts.delete(message);
    }
  }

  /** Publishes an assistant message once per logical message: start, the buffered deltas, end. */
  publishAssistant(message: AssistantMessage): void {
    const turnIndex = this.turn.turnIndex;
    this.emit({ type: 'messageStart', turnIndex, message: { role: 'assistant', content: [], stopReason: 'stop', model: message.model } as AssistantMessage });
    for (const delta of this.turn.deltas) this.emit({ type: 'messageUpdate', turnIndex, delta });
    this.turn.deltas = [];
    this.emit({ type: 'messageEnd', turnIndex, message });
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
    this.emit({ type: 'turnEnd', turnIndex: this.turn.turnIndex, reason: 'aborted', assistant: message, toolResults: [] });
    this.turn.open = false;
  }

  countersSnapshot(): Counters {
    return cloneCounters(this.agent.counters);
  }
}
