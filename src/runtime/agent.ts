import type { Observable } from 'rxjs';
import { createContextGuard } from '../context/guard.js';
import { cloneCounters, zeroCounters, type Counters } from '../domain/counters.js';
import { AgentError } from '../domain/errors.js';
import type { AgentEvent } from '../domain/events.js';
import { jsonProblem } from '../domain/json-problem.js';
import { toMessage, type Message, type MessageInput } from '../domain/messages.js';
import type { RunResult } from '../domain/outcomes.js';
import type { ApprovalDecision } from '../policies/types.js';
import type { PendingApproval, SessionStore } from '../store/types.js';
import { createToolRegistry } from '../tools/registry.js';
import { deliver } from './agent-inputs.js';
import { loadSession } from './agent-load.js';
import { answerApproval, pendingApprovalsOf } from './approval-answer.js';
import { sessionView } from './checkpoint.js';
import type { EffectHost } from './effects.js';
import { AgentEventFeed } from './event-stream.js';
import { SessionHistory } from './history.js';
import { safeReporter } from './isolation.js';
import type { LeaseOptions } from './lease.js';
import { resolveOptions, type AgentOptions } from './options.js';
import { ephemeralSessionKey } from './idempotency.js';
import { errorMessage } from './policy-runner.js';
import { reportToolProblem } from './report.js';
import { unpark, unparkSync } from './parking.js';
import { abortUnstarted, beginRun } from './run-start.js';
import { ToolSourceFollower } from './tool-sources.js';
import { tapAgent } from './agent-tap.js';
import type { AgentState, MessageSource, RunSession, SteerReceipt } from './run-session.js';

/** One run of an agent: from `prompt()` or `continue()` until the model has nothing left to do, a stop, or an abort. */
export interface AgentRun {
  /** Unique per run; every event of the run carries it (a run resumed after a restart keeps it). */
  runId: string;
  /** This run's events. Late subscribers get the run so far replayed, then the live events. */
  events: Observable<AgentEvent>;
  /** Resolves when the run ends; never rejects for model or tool failures. */
  result: Promise<RunResult>;
}

/** What the agent holds at one moment, read from its charts (`agent.snapshot()`). */
export interface AgentSnapshot {
  /** The history: every message committed so far, across runs. */
  messages: Message[];
  /** The counters of every run of the agent, added up. */
  counters: Counters;
  /** Steering messages accepted and not yet delivered to a turn. */
  steeringQueue: Message[];
  /** Follow-up messages waiting for the model to have nothing left to do. */
  followUpQueue: Message[];
  /** The index of the next turn: it keeps counting across the runs of one agent. */
  turnIndex: number;
  /** Whether a run is in progress. */
  running: boolean;
}

/** An agent made by `createAgent`: start runs, talk to the run in progress, read what happened. */
export interface Agent {
  /**
   * Starts a run with these messages (a string is user text). Throws `AgentError('AlreadyRunning')` while a run is in
   * progress.
   */
  prompt(input: MessageInput | MessageInput[]): AgentRun;
  /**
   * Starts a run from the history and the queues, with no new message (after an abort, say); `NothingToContinue` when
   * there is neither.
   */
  continue(): AgentRun;
  /**
   * Sends a message to the run in progress as soon as possible: the next turn's input (unfinished tools are cancelled
   * after the grace period unless `steeringInterrupts` is false). Resolves with the turn it was delivered to, or
   * `stillQueued` if the run ended first.
   */
  steer(input: MessageInput): Promise<SteerReceipt>;
  /**
   * Queues a message for when the model has nothing left to do: the run goes on with it instead of ending. Resolves
   * like `steer`.
   */
  followUp(input: MessageInput): Promise<SteerReceipt>;
  /**
   * Ends the run in progress: every open tool call is cancelled and answered; `run.result` resolves `aborted` with
   * `reason` within a macrotask.
   */
  abort(reason?: string): void;
  /**
   * Answers a durable approval (an agent with a store and no approval handler), in this agent's run
   * or in the run the stored session holds parked (this agent then continues it). Returns the run
   * that goes on with the answer.
   */
  resolveApproval(toolCallId: string, decision: ApprovalDecision, options: { version: number }): AgentRun;
  /** Durable approvals (and running calls' questions, `elicitation` set) waiting for `resolveApproval`, with the version to quote. */
  pendingApprovals(): PendingApproval[];
  /** With a store: resolves once the session is loaded; `resumedRun` is a run a restart interrupted. */
  readonly ready: Promise<{ resumedRun: AgentRun | null }>;
  /** The run in progress, if any. */
  readonly currentRun: AgentRun | null;
  /** Resolves when every committed step has been written to the store; rejects with the store's failure. */
  flush(): Promise<void>;
  /**
   * Lets the session go: waits for the writes in flight, releases the lease (another agent may take
   * the session at once) and takes nothing afterwards (AgentError('Closed')). A run in progress is
   * left as a crash would leave it — nothing more is written, its tools are aborted — and the next
   * agent resumes it. An embedded store moves what it wrote into its main file.
   */
  close(): Promise<void>;
  /** Every run's events, live (a subscriber gets what happens from now on; `run.events` replays a run). */
  readonly events: Observable<AgentEvent>;
  /** The history: every message committed so far, across runs. */
  readonly messages: readonly Message[];
  /** The counters of every run of the agent, added up. */
  readonly counters: Counters;
  /** Whether a run is in progress. */
  readonly running: boolean;
  /** What the agent holds now (history, counters, queues, turn index), read from its charts. */
  snapshot(): AgentSnapshot;
}

/** The options of a durable session (docs/durable-sessions.md): both `store` and `sessionId`, or neither. */
export interface DurableOptions {
  /** Where the session's steps are written: `memoryStore()`, `sqliteStore(path)`, `postgresStore(...)`. */
  store?: SessionStore;
  /** The session to load (and create when new); at most 512 characters. */
  sessionId?: string;
  /** The session's lease (taken per run): its ttl (default 30 s, renewed while running), its owner, its host identity. */
  lease?: LeaseOptions;
}

export type { SteerReceipt };

/** Session ids a store holds as they are: well-formed Unicode (SQLite and PostgreSQL store UTF-8), at most 512 characters. */
export const MAX_SESSION_ID_LENGTH = 512;

/**
 * Creates an agent: the model, the tools and how the loop runs (`AgentOptions`), and with `store` + `sessionId` a
 * durable session that resumes after a restart (await `agent.ready`). Throws `AgentError('InvalidOptions')` naming a
 * wrong option.
 */
export function createAgent(options: AgentOptions & DurableOptions): Agent {
  return createHostedAgent(options, null);
}

/** createAgent whose effects go through a durable-execution engine (used by agentchart/restate). */
export function createHostedAgent(options: AgentOptions & DurableOptions, host: EffectHost | null): Agent {
  const resolved = resolveOptions(options);
  const onSubscriberError = safeReporter(options.onSubscriberError);
  if ((options.store === undefined) !== (options.sessionId === undefined)) {
    throw new AgentError(
      'InvalidOptions',
      'createAgent: `store` and `sessionId` go together (a durable session needs both).',
    );
  }
  checkSessionId(options.sessionId);
  const registry = createToolRegistry(options.tools ?? []);
  const reportProblem = reportToolProblem(options.finalReport?.toolName, registry);
  if (reportProblem) throw new AgentError('InvalidOptions', reportProblem);
  const state: AgentState = {
    options,
    resolved,
    sessionKey: options.sessionId ?? ephemeralSessionKey(),
    registry,
    toolSources: new ToolSourceFollower(options.tools ?? []),
    get guard() {
      // Built on first use (proactive compaction or an overflow): most agents never need one.
      const guard = createContextGuard({
        maxTokens: options.context?.maxTokens ?? Number.MAX_SAFE_INTEGER,
        transform: options.context?.transform,
      });
      Object.defineProperty(this, 'guard', { value: guard });
      return guard;
    },
    log: new SessionHistory(),
    get history() {
      return this.log.messages;
    },
    counters: zeroCounters(),
    feed: new AgentEventFeed(onSubscriberError),
    between: { steeringQueue: [], followUpQueue: [], turnIndex: 0, run: null },
    sources: new WeakMap(),
    receipts: new Map(),
    run: null,
    persister: null,
    access: null,
    host,
    cutFinalWrite: null,
  };
  let closed = false;
  /** Settles once close() has let the session go: a tool watching the agent (the studio) lets it go then. */
  let markClosed = () => {};
  const whenClosed = new Promise<void>((resolve) => (markClosed = resolve));
  // Attached before the session loads, so a run resumed after a restart is observed from its first event.
  const { sessionId, systemPrompt } = options;
  options.otel?.attach({ events: state.feed.observable(), sessionId, systemPrompt });
  // An embedded store counts its agents: it moves its log into its file when one closes.
  const detachStore = options.store?.attach?.() ?? null;
  let loaded = !options.store;
  const handleOf = (run: RunSession): AgentRun => ({
    runId: run.runId,
    events: run.handle!.events,
    result: run.handle!.result,
  });
  const durable = options.store && options.sessionId ? { store: options.store, sessionId: options.sessionId } : null;
  const ready = durable
    ? loadSession(state, { ...durable, ...(options.lease ? { lease: options.lease } : {}) }, onSubscriberError).then(
        (resumed) => ((loaded = true), { resumedRun: resumed ? handleOf(resumed) : null }),
      )
    : Promise.resolve({ resumedRun: null });
  // A failed load rejects `ready` for whoever awaits it, without an unhandled rejection otherwise.
  ready.catch(() => {});

  /** A store failure taking a parked run back: the run ends with it (nothing more is written). */
  const fail = (error: unknown) => state.persister?.fail(error);
  const assertOpen = (what: string) => {
    if (closed) throw closedError(what);
  };
  const assertIdle = (what: string) => {
    assertOpen(what);
    if (!loaded) throw new AgentError('NotReady', `${what}: the session is still loading; await agent.ready first.`);
    // After a failed write this agent's memory is ahead of its store: a new agent loads the session.
    if (state.persister?.failure) throw state.persister.failure;
    if (state.run)
      throw new AgentError(
        'AlreadyRunning',
        `${what}: a run is already in progress: use steer() or followUp(), or abort() it first.`,
      );
  };
  const enqueue = (input: MessageInput, source: MessageSource): Promise<SteerReceipt> => {
    assertOpen(source === 'steering' ? 'steer()' : 'followUp()');
    const message = parseInput(input);
    // Before `ready`: applied after the load (and stored), never replaced by it.
    if (!loaded) return ready.then(() => deliver(state, message, source, onSubscriberError));
    return deliver(state, message, source, onSubscriberError);
  };

  const agent: Agent = {
    ready,
    prompt(input) {
      assertIdle('prompt()');
      const inputs = Array.isArray(input) ? input : [input];
      if (inputs.length === 0) throw new AgentError('InvalidInput', 'prompt() needs at least one message.');
      const newMessages = inputs.map(parseInput);
      return handleOf(beginRun(state, onSubscriberError, { plan: () => ({ kind: 'fresh', newMessages }) }));
    },
    continue() {
      assertIdle('continue()');
      return handleOf(beginRun(state, onSubscriberError, { plan: () => continuation(state) }));
    },
    steer: (input) => enqueue(input, 'steering'),
    followUp: (input) => enqueue(input, 'followUp'),
    abort(reason) {
      const run = state.run;
      const text = abortReasonText(reason);
      if (!run) {
        state.cutFinalWrite?.();
        return;
      }
      if (!run.master) return abortUnstarted(state, run, text);
      const abortRun = () => {
        run.controller.abort(text);
        run.master?.send({ type: 'ABORT' });
      };
      // Parked at an approval: the run takes its lease back to write its end (unless it moved on).
      if (run.parked && !closed) {
        if (!state.access?.sync) {
          void unpark(run).then((goesOn) => goesOn && abortRun(), fail);
          return;
        }
        try {
          if (!unparkSync(run)) return;
        } catch (error) {
          fail(error);
        }
      }
      abortRun();
    },
    resolveApproval(toolCallId, decision, approvalOptions) {
      assertOpen('resolveApproval()');
      return handleOf(answerApproval(state, onSubscriberError, toolCallId, decision, approvalOptions));
    },
    pendingApprovals: () => pendingApprovalsOf(state),
    get currentRun() {
      return state.run?.handle ? handleOf(state.run) : null;
    },
    flush: () => state.persister?.flushed() ?? Promise.resolve(),
    async close() {
      if (closed) return;
      closed = true;
      try {
        await state.persister?.settled();
        state.persister?.detach();
        const run = state.run;
        run?.parked?.stop();
        if (run) run.parked = null;
        if (run?.master) {
          run.controller.abort('the agent was closed');
          run.master.send({ type: 'ABORT' });
          await run.handle?.result;
        } else if (run) {
          abortUnstarted(state, run, 'the agent was closed');
        }
        await state.access?.keeper.release();
        detachStore?.();
      } finally {
        markClosed();
      }
    },
    get events() {
      return state.feed.observable();
    },
    get messages() {
      return state.history;
    },
    get counters() {
      return cloneCounters(state.counters);
    },
    get running() {
      return state.run !== null;
    },
    snapshot: () => {
      const view = sessionView(state);
      return {
        messages: state.history.slice(),
        counters: cloneCounters(state.counters),
        steeringQueue: [...view.steeringQueue],
        followUpQueue: [...view.followUpQueue],
        turnIndex: view.turnIndex,
        running: state.run !== null,
      };
    },
  };
  tapAgent(agent, state, whenClosed);
  return agent;
}

/** `continue()` on the session as it is once the lease is taken: the queued messages, or the history's unanswered tail. */
function continuation(state: AgentState) {
  const between = state.between;
  const queued = [...(between?.steeringQueue ?? []), ...(between?.followUpQueue ?? [])];
  const tail = state.history.at(-1);
  if (!tail && queued.length === 0)
    throw new AgentError('NothingToContinue', 'continue() needs a history or queued messages: there are none.');
  if (tail?.role === 'assistant' && queued.length === 0) {
    throw new AgentError(
      'NothingToContinue',
      'continue(): the history ends with an assistant message and nothing is queued; use prompt() instead.',
    );
  }
  return { kind: 'fresh' as const, newMessages: queued, drainsQueues: true };
}

function closedError(what: string): AgentError {
  return new AgentError('Closed', `${what}: the agent was closed; create a new one to continue the session.`);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Refused at the door: ids a store would mangle (lone surrogates become U+FFFD) or that are too long to key on. */
function checkSessionId(sessionId: unknown): void {
  if (typeof sessionId !== 'string') return;
  if (LONE_SURROGATE.test(sessionId)) {
    throw new AgentError(
      'InvalidInput',
      'createAgent: `sessionId` is not well-formed Unicode (it holds a lone surrogate).',
    );
  }
  if (sessionId.length > MAX_SESSION_ID_LENGTH) {
    throw new AgentError(
      'InvalidInput',
      `createAgent: \`sessionId\` is ${sessionId.length} characters long; at most ${MAX_SESSION_ID_LENGTH} are allowed.`,
    );
  }
}

/** `abort(reason)`: a string as given, an Error's message, anything else as text; 'aborted' when absent. */
function abortReasonText(reason: unknown): string {
  if (reason === undefined || reason === null || reason === '') return 'aborted';
  if (typeof reason === 'string') return reason;
  if (reason instanceof Error) return reason.message || reason.name;
  try {
    return String(reason);
  } catch {
    return 'aborted';
  }
}

function parseInput(input: MessageInput): Message {
  let message: Message;
  try {
    message = toMessage(input);
  } catch (error) {
    throw new AgentError('InvalidInput', `Invalid message: ${errorMessage(error)}`);
  }
  // The whole message, not only a custom message's data: a tool call's arguments are stored too.
  const problem = jsonProblem(message, 'message');
  if (problem) throw new AgentError('InvalidInput', `Invalid message: ${problem}, which JSON cannot hold`);
  return message;
}
