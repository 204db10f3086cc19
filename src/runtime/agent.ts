import type { Observable } from 'rxjs';
import { createContextGuard } from '../context/guard.js';
import { cloneCounters, zeroCounters, type Counters } from '../domain/counters.js';
import { AgentError } from '../domain/errors.js';
import type { AgentEvent } from '../domain/events.js';
import { toMessage, type Message, type MessageInput } from '../domain/messages.js';
import type { RunResult } from '../domain/outcomes.js';
import type { ApprovalDecision } from '../policies/types.js';
import type { PendingApproval, SessionStore } from '../store/types.js';
import { createToolRegistry } from '../tools/registry.js';
import type { EffectHost } from './effects.js';
import { AgentEventFeed } from './event-stream.js';
import { resolveOptions, type AgentOptions } from './options.js';
import { SessionHistory } from './history.js';
import { LeaseKeeper, type LeaseOptions } from './lease.js';
import { Persister, runStopOf } from './persistence.js';
import { safeReporter } from './isolation.js';
import { errorMessage } from './policy-runner.js';
import { checkApprovalDecision } from '../policies/verdicts.js';
import { planResume, restoreAgent } from './resume.js';
import { verdictOf } from './approvals.js';
import { reportToolProblem } from './report.js';
import { currentPendingApproval } from './checkpoint.js';
import { launchRun } from './run-launcher.js';
import { ToolSourceFollower } from './tool-sources.js';
import { tapAgent } from './agent-tap.js';
import type { AgentState, MessageSource, RunSession, SteerReceipt } from './run-session.js';

export interface AgentRun {
  runId: string;
  /** This run's events. Late subscribers get the run so far replayed, then the live events. */
  events: Observable<AgentEvent>;
  /** Resolves when the run ends; never rejects for model or tool failures. */
  result: Promise<RunResult>;
}

export interface AgentSnapshot {
  messages: Message[];
  counters: Counters;
  steeringQueue: Message[];
  followUpQueue: Message[];
  turnIndex: number;
  running: boolean;
}

export interface Agent {
  prompt(input: MessageInput | MessageInput[]): AgentRun;
  continue(): AgentRun;
  steer(input: MessageInput): Promise<SteerReceipt>;
  followUp(input: MessageInput): Promise<SteerReceipt>;
  abort(reason?: string): void;
  /** Answers a durable approval (an agent with a store and no approval handler). */
  resolveApproval(toolCallId: string, decision: ApprovalDecision, options: { version: number }): void;
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
   * the session at once) and takes no run afterwards. A run in progress is left as a crash would
   * leave it — nothing more is written, its tools are aborted — and the next agent resumes it from its last step.
   */
  close(): Promise<void>;
  readonly events: Observable<AgentEvent>;
  readonly messages: readonly Message[];
  readonly counters: Counters;
  readonly running: boolean;
  snapshot(): AgentSnapshot;
}

export interface DurableOptions {
  store?: SessionStore;
  sessionId?: string;
  /** One owner per session: the lease's ttl (default 30 s, renewed while running), its owner. */
  lease?: LeaseOptions;
}

export type { SteerReceipt };

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
  const registry = createToolRegistry(options.tools ?? []);
  const reportProblem = reportToolProblem(options.finalReport?.toolName, registry);
  if (reportProblem) throw new AgentError('InvalidOptions', reportProblem);
  const state: AgentState = {
    options,
    resolved,
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
    steeringQueue: [],
    followUpQueue: [],
    turnIndex: 0,
    sources: new WeakMap(),
    receipts: new Map(),
    unacknowledged: new Map(),
    run: null,
    persister: null,
    lease: null,
    host,
    cutFinalWrite: null,
  };
  let closed = false;
  // Attached before the session loads, so a run resumed after a restart is observed from its first event.
  const { sessionId, systemPrompt } = options;
  options.otel?.attach({ events: state.feed.observable(), sessionId, systemPrompt });
  let loaded = !options.store;
  const handleOf = (run: RunSession): AgentRun => ({
    runId: run.runId,
    events: run.handle!.events,
    result: run.handle!.result,
  });
  const durable = options.store && options.sessionId ? { store: options.store, sessionId: options.sessionId } : null;
  const ready = durable
    ? load(state, { ...durable, ...(options.lease ? { lease: options.lease } : {}) }, onSubscriberError).then(
        (resumed) => ((loaded = true), { resumedRun: resumed ? handleOf(resumed) : null }),
      )
    : Promise.resolve({ resumedRun: null });
  // A failed load rejects `ready` for whoever awaits it, without an unhandled rejection otherwise.
  ready.catch(() => {});

  const assertIdle = (what: string) => {
    if (closed) {
      throw new AgentError('NotReady', `${what}: the agent was closed; create a new one to continue the session.`);
    }
    if (!loaded) throw new AgentError('NotReady', `${what}: the session is still loading; await agent.ready first.`);
    // After a failed write this agent's memory is ahead of its store: a new agent loads the session.
    if (state.persister?.failure) throw state.persister.failure;
    if (state.run)
      throw new AgentError(
        'AlreadyRunning',
        `${what}: a run is already in progress: use steer() or followUp(), or abort() it first.`,
      );
  };
  const start = (newMessages: Message[]): AgentRun =>
    handleOf(launchRun(state, { kind: 'fresh', newMessages }, onSubscriberError));

  const enqueue = (input: MessageInput, source: MessageSource): Promise<SteerReceipt> => {
    const message = parseInput(input);
    state.sources.set(message, source);
    const run = state.run;
    if (!run?.master || run.closing) {
      (source === 'steering' ? state.steeringQueue : state.followUpQueue).push(message);
      state.persister?.step();
      return Promise.resolve({ status: 'stillQueued' });
    }
    const receipt = new Promise<SteerReceipt>((resolve) => state.receipts.set(message, resolve));
    state.unacknowledged.set(message, source);
    // Accepted means persisted: the master's step that takes it writes a step (a crash keeps it).
    run.master.send({ type: source === 'steering' ? 'STEER' : 'FOLLOW_UP', message });
    return receipt;
  };

  const agent: Agent = {
    ready,
    prompt(input) {
      assertIdle('prompt()');
      const inputs = Array.isArray(input) ? input : [input];
      if (inputs.length === 0) throw new AgentError('InvalidInput', 'prompt() needs at least one message.');
      return start(inputs.map(parseInput));
    },
    continue() {
      assertIdle('continue()');
      const queued = [...state.steeringQueue, ...state.followUpQueue];
      const tail = state.history.at(-1);
      if (!tail && queued.length === 0)
        throw new AgentError('NothingToContinue', 'continue() needs a history or queued messages: there are none.');
      if (tail?.role === 'assistant' && queued.length === 0) {
        throw new AgentError(
          'NothingToContinue',
          'continue(): the history ends with an assistant message and nothing is queued; use prompt() instead.',
        );
      }
      state.steeringQueue = [];
      state.followUpQueue = [];
      return start(queued);
    },
    steer: (input) => enqueue(input, 'steering'),
    followUp: (input) => enqueue(input, 'followUp'),
    abort(reason) {
      const run = state.run;
      if (!run?.master) {
        state.cutFinalWrite?.();
        return;
      }
      run.controller.abort(abortReasonText(reason));
      run.master.send({ type: 'ABORT' });
    },
    resolveApproval(toolCallId, decision, options) {
      if (typeof toolCallId !== 'string' || toolCallId === '') {
        throw new AgentError('InvalidInput', 'resolveApproval: the tool call id must be a non-empty string.');
      }
      const version: unknown = (options as { version?: unknown } | undefined)?.version;
      if (typeof version !== 'number' || !Number.isInteger(version)) {
        const hint = 'pass { version } (an integer, from pendingApprovals()) as the third argument';
        throw new AgentError('InvalidInput', `resolveApproval: ${hint}.`);
      }
      // Checked before anything else: an invalid decision leaves the approval pending, untouched.
      const checked = checkApprovalDecision(decision);
      if (!checked.ok) {
        const shapes = '{ approved: true }, { approved: true, arguments } or { approved: false, reason? }';
        throw new AgentError('InvalidInput', `resolveApproval: ${checked.problem}; expected ${shapes}.`);
      }
      const question = state.run?.elicitations.get(toolCallId);
      const pending = question
        ? question.pending
        : state.persister
          ? currentPendingApproval(state.run, state.persister.approvals)
          : null;
      if (!pending || pending.toolCallId !== toolCallId) {
        throw new AgentError(
          'UnknownToolCall',
          `resolveApproval: no approval is pending for tool call "${toolCallId}"${pending ? ` (pending: "${pending.toolCallId}")` : ''}.`,
        );
      }
      if (version !== pending.version) {
        throw new AgentError(
          'StaleVersion',
          `resolveApproval: version ${version} is stale; the approval for "${toolCallId}" was requested at version ${pending.version}.`,
        );
      }
      if (question) return question.answer(checked.value);
      const call = { id: pending.toolCallId, name: pending.toolName, arguments: pending.arguments };
      const verdict = verdictOf(state.registry, call, checked.value);
      state.run?.master?.send({ type: 'APPROVAL_DECIDED', toolCallId, verdict });
    },
    pendingApprovals() {
      const pending = state.persister ? currentPendingApproval(state.run, state.persister.approvals) : null;
      const questions = [...(state.run?.elicitations.values() ?? [])].map((question) => question.pending);
      const approval = pending
        ? [
            {
              toolCallId: pending.toolCallId,
              toolName: pending.toolName,
              arguments: pending.arguments,
              version: pending.version,
            },
          ]
        : [];
      return [...approval, ...questions];
    },
    get currentRun() {
      return state.run?.handle ? handleOf(state.run) : null;
    },
    flush: () => state.persister?.flushed() ?? Promise.resolve(),
    async close() {
      if (closed) return;
      closed = true;
      await state.persister?.settled();
      state.persister?.detach();
      const run = state.run;
      if (run?.master) {
        run.controller.abort('the agent was closed');
        run.master.send({ type: 'ABORT' });
        await run.handle?.result;
      }
      await state.lease?.release();
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
    snapshot: () => ({
      messages: state.history.slice(),
      counters: cloneCounters(state.counters),
      steeringQueue: [...state.steeringQueue],
      followUpQueue: [...state.followUpQueue],
      turnIndex: state.turnIndex,
      running: state.run !== null,
    }),
  };
  tapAgent(agent, state);
  return agent;
}

/** Takes the session's lease, loads the session; a run a restart (or a dead owner) interrupted continues at once. */
async function load(
  state: AgentState,
  durable: Required<Pick<DurableOptions, 'store' | 'sessionId'>> & DurableOptions,
  onError: (error: unknown) => void,
): Promise<RunSession | null> {
  const { store, sessionId } = durable;
  const clock = state.options.clock as ConstructorParameters<typeof LeaseKeeper>[3];
  // A durable-execution engine runs one writer per session (Restate: one exclusive handler per key): no lease.
  const onLeaseFailure = (error: unknown) => state.persister?.fail(error);
  const keeper = state.host ? null : new LeaseKeeper(store, sessionId, durable.lease ?? {}, clock, onLeaseFailure);
  const lease = keeper ? await keeper.acquire() : null;
  state.lease = keeper;
  const checkpoint = await store.load(sessionId);
  // A failed write ends the run in progress (store failures are fatal, never subscriber errors).
  const onFailure = (failure: AgentError) => state.run?.stop(runStopOf(failure));
  state.persister = new Persister(store, state, sessionId, checkpoint?.version ?? -1, onFailure);
  if (lease) state.persister.token = lease.token;
  if (!checkpoint) return null;
  restoreAgent(state, checkpoint);
  if (!checkpoint.run) return null;
  return launchRun(state, planResume(state, checkpoint.run), onError);
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
  try {
    return toMessage(input);
  } catch (error) {
    throw new AgentError('InvalidInput', `Invalid message: ${errorMessage(error)}`);
  }
}
