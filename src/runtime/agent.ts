import type { Observable } from 'rxjs';
import { createActor, type Actor } from 'xstate';
import type { MasterContext } from '../../machines/master.types.js';
import { createContextGuard } from '../context/guard.js';
import { cloneCounters, zeroCounters, type Counters } from '../domain/counters.js';
import { AgentError } from '../domain/errors.js';
import type { AgentEvent } from '../domain/events.js';
import { toMessage, type Message, type MessageInput } from '../domain/messages.js';
import type { RunResult } from '../domain/outcomes.js';
import { createToolRegistry } from '../tools/registry.js';
import { AgentEventFeed } from './event-stream.js';
import { masterLogic } from './master-effects.js';
import { resolveOptions, type AgentOptions } from './options.js';
import { errorMessage } from './policy-runner.js';
import { finalReportOf } from './report.js';
import { bindRun } from './run-registry.js';
import { RunSession, type AgentState, type MessageSource, type SteerReceipt } from './run-session.js';

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
  readonly events: Observable<AgentEvent>;
  readonly messages: readonly Message[];
  readonly counters: Counters;
  readonly running: boolean;
  snapshot(): AgentSnapshot;
}

export type { SteerReceipt };

export function createAgent(options: AgentOptions): Agent {
  const resolved = resolveOptions(options);
  const onSubscriberError = options.onSubscriberError ?? ((error: unknown) => console.error('agentchart: an event subscriber threw:', error));
  const maxTokens = options.context?.maxTokens;
  const state: AgentState = {
    options,
    resolved,
    registry: createToolRegistry(options.tools ?? []),
    guard: createContextGuard({ maxTokens: maxTokens ?? Number.MAX_SAFE_INTEGER, transform: options.context?.transform }),
    history: [],
    counters: zeroCounters(),
    feed: new AgentEventFeed(onSubscriberError),
    steeringQueue: [],
    followUpQueue: [],
    turnIndex: 0,
    sources: new WeakMap(),
    receipts: new Map(),
    run: null,
  };
  let actor: Actor<ReturnType<typeof masterLogic>> | null = null;

  const startRun = (newMessages: Message[]): AgentRun => {
    const run = new RunSession(state, onSubscriberError);
    state.run = run;
    let resolveResult: (result: RunResult) => void = () => {};
    const result = new Promise<RunResult>((resolve) => (resolveResult = resolve));

    const finish = (context: Pick<MasterContext, 'status' | 'endReason' | 'error' | 'steeringQueue' | 'followUpQueue' | 'turnIndex'>) => {
      if (run.ended) return;
      run.closeTurnAsAborted();
      state.steeringQueue = context.steeringQueue;
      state.followUpQueue = context.followUpQueue;
      state.turnIndex = context.turnIndex;
      const counters = cloneCounters(state.counters);
      run.emit({ type: 'agentEnd', status: context.status, endReason: context.endReason, messages: state.history.slice(), counters });
      run.ended = true;
      run.ledger.close();
      for (const message of [...context.steeringQueue, ...context.followUpQueue]) {
        state.receipts.get(message)?.({ status: 'stillQueued' });
        state.receipts.delete(message);
      }
      state.run = null;
      run.log.close();
      const report = finalReportOf(state, context.endReason);
      resolveResult({
        status: context.status,
        endReason: context.endReason,
        messages: state.history.slice(),
        counters,
        ...(report ? { finalReport: report } : {}),
        ...(context.error && context.status === 'failed' ? { error: { code: context.error.kind, message: context.error.message } } : {}),
      });
    };
    run.finish = finish;

    const master = createActor(masterLogic(), {
      input: {
        newMessages,
        steeringQueue: state.steeringQueue,
        followUpQueue: state.followUpQueue,
        steeringMode: resolved.steeringMode,
        followUpMode: resolved.followUpMode,
        turnIndex: state.turnIndex,
        maxTurns: resolved.maxTurns,
        maxAttempts: resolved.retry.maxAttempts,
        modelCount: resolved.models.length,
        reportToolName: options.finalReport?.toolName ?? null,
        progressToolNames: state.registry.tools.filter((tool) => tool.progress).map((tool) => tool.name),
        postLoopPolicies: (options.policies?.postLoop?.length ?? 0) > 0,
        turnFeatures: {
          preTurnPolicies: (options.policies?.preTurn?.length ?? 0) > 0,
          preDispatchPolicies: (options.policies?.preDispatch?.length ?? 0) > 0,
          postTurnPolicies: (options.policies?.postTurn?.length ?? 0) > 0,
          steeringInterrupts: resolved.steeringInterrupts,
          steeringGraceMs: resolved.steeringGraceMs,
        },
      },
      clock: options.clock,
      inspect: options.inspect,
    });
    actor = master;
    bindRun(master.system, run);
    // A bug must never leave a run without agentEnd or a result: end it as a fatal error.
    master.subscribe({
      error: (error) => {
        const snapshot = master.getSnapshot();
        finish({
          ...snapshot.context,
          status: 'failed',
          endReason: 'fatalError',
          error: { kind: 'unknown', message: `internal error: ${errorMessage(error)}`, retryable: false },
        });
      },
    });
    master.start();
    master.send({ type: 'START' });
    return { runId: run.runId, events: run.log.observable(), result };
  };

  const enqueue = (input: MessageInput, source: MessageSource): Promise<SteerReceipt> => {
    const message = parseInput(input);
    state.sources.set(message, source);
    if (!state.run || !actor) {
      (source === 'steering' ? state.steeringQueue : state.followUpQueue).push(message);
      return Promise.resolve({ status: 'stillQueued' });
    }
    const receipt = new Promise<SteerReceipt>((resolve) => state.receipts.set(message, resolve));
    actor.send({ type: source === 'steering' ? 'STEER' : 'FOLLOW_UP', message });
    return receipt;
  };

  return {
    prompt(input) {
      if (state.run) throw new AgentError('AlreadyRunning', 'A run is already in progress: use steer() or followUp(), or abort() it first.');
      const inputs = Array.isArray(input) ? input : [input];
      if (inputs.length === 0) throw new AgentError('InvalidInput', 'prompt() needs at least one message.');
      return startRun(inputs.map(parseInput));
    },
    continue() {
      if (state.run) throw new AgentError('AlreadyRunning', 'A run is already in progress.');
      const queued = [...state.steeringQueue, ...state.followUpQueue];
      const tail = state.history.at(-1);
      if (!tail && queued.length === 0) throw new AgentError('NothingToContinue', 'continue() needs a history or queued messages: there are none.');
      if (tail?.role === 'assistant' && queued.length === 0) {
        throw new AgentError('NothingToContinue', 'continue(): the history ends with an assistant message and nothing is queued; use prompt() instead.');
      }
      state.steeringQueue = [];
      state.followUpQueue = [];
      return startRun(queued);
    },
    steer: (input) => enqueue(input, 'steering'),
    followUp: (input) => enqueue(input, 'followUp'),
    abort(reason) {
      const run = state.run;
      if (!run || !actor) return;
      run.controller.abort(reason ?? 'aborted');
      actor.send({ type: 'ABORT' });
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
}

function parseInput(input: MessageInput): Message {
  try {
    return toMessage(input);
  } catch (error) {
    throw new AgentError('InvalidInput', `Invalid message: ${errorMessage(error)}`);
  }
}
