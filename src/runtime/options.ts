import type { ActorOptions, AnyActorLogic, InspectionEvent, Observer } from 'xstate';
import type { QueueMode } from '../../machines/master.types.js';
import { AgentError } from '../domain/errors.js';
import type { ContextTransform } from '../context/guard.js';
import type { Model } from '../model/port.js';
import type { AgentObserver } from './observer.js';
import type { ApprovalHandler, ApprovalMode, Policies } from '../policies/types.js';
import type { ToolExecution } from '../tools/strategy.js';
import type { AnyTool } from '../tools/types.js';

export interface RetryOptions {
  /** Model attempts per turn and per model, the first call included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Full jitter when true: the delay is drawn uniformly from [delay/2, delay]. */
  jitter: boolean;
  /** A provider's retry-after wins over the formula, clamped to this. */
  maxRetryAfterMs: number;
}

export interface AgentOptions {
  model: Model;
  fallbackModels?: Model[];
  systemPrompt?: string;
  tools?: AnyTool[];
  policies?: Policies;
  approval?: ApprovalHandler;
  approvalMode?: ApprovalMode;
  toolExecution?: ToolExecution;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  /**
   * 'buffered' (default): an attempt's deltas are published once the attempt is final, so a retried
   * attempt's partial text never appears. 'live': deltas are published as they arrive; an attempt
   * that already showed content is then never retried (its failure ends the turn with an error).
   */
  streaming?: 'buffered' | 'live';
  /** true (default): steering cancels unfinished tools after `steeringGraceMs`; false: waits for the batch. */
  steeringInterrupts?: boolean;
  steeringGraceMs?: number;
  retry?: Partial<RetryOptions>;
  maxTurns?: number;
  finalReport?: { toolName: string };
  context?: { maxTokens?: number; transform?: ContextTransform };
  /** XState clock for every delay (backoff, steering grace); `SimulatedClock` in tests. */
  clock?: ActorOptions<AnyActorLogic>['clock'];
  /** XState inspection observer, e.g. `createWebSocketInspector().inspect` from @statelyai/inspect. */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /**
   * How many of a run's latest events `run.events` replays to a subscriber that comes late
   * (default 5,000; 0 = none, live events only). Older events are in the store, if there is one.
   */
  replayBuffer?: number;
  /** OpenTelemetry spans: `otelObserver()` from agentchart/otel (any AgentObserver is accepted). */
  otel?: AgentObserver;
  /** Receives errors thrown by event subscribers (they are isolated from the run). */
  onSubscriberError?: (error: unknown) => void;
}

export interface ResolvedOptions extends Required<Pick<AgentOptions, 'steeringMode' | 'followUpMode' | 'steeringInterrupts' | 'steeringGraceMs' | 'approvalMode' | 'toolExecution' | 'maxTurns'>> {
  models: Model[];
  retry: RetryOptions;
}

export const DEFAULT_RETRY: RetryOptions = { maxAttempts: 3, baseDelayMs: 1_000, maxDelayMs: 30_000, jitter: true, maxRetryAfterMs: 60_000 };

export function resolveOptions(options: AgentOptions): ResolvedOptions {
  if (!options || typeof options !== 'object') throw new AgentError('InvalidOptions', 'createAgent needs an options object.');
  if (!options.model || typeof options.model.stream !== 'function') {
    throw new AgentError('InvalidOptions', 'createAgent: `model` must implement the Model port (name + stream()).');
  }
  const retry = { ...DEFAULT_RETRY, ...options.retry };
  if (!Number.isInteger(retry.maxAttempts) || retry.maxAttempts < 1) {
    throw new AgentError('InvalidOptions', 'retry.maxAttempts must be an integer ≥ 1.');
  }
  const maxTurns = options.maxTurns ?? Number.POSITIVE_INFINITY;
  if (!(maxTurns >= 1)) throw new AgentError('InvalidOptions', 'maxTurns must be ≥ 1.');
  if (options.replayBuffer !== undefined && !(Number.isInteger(options.replayBuffer) && options.replayBuffer >= 0)) {
    throw new AgentError('InvalidOptions', 'replayBuffer must be an integer ≥ 0.');
  }
  const execution = options.toolExecution ?? 'parallel';
  if (typeof execution === 'object' && 'concurrency' in execution && !(execution.concurrency >= 1)) {
    throw new AgentError('InvalidOptions', 'toolExecution.concurrency must be ≥ 1.');
  }
  return {
    models: [options.model, ...(options.fallbackModels ?? [])],
    retry,
    maxTurns,
    toolExecution: execution,
    approvalMode: options.approvalMode ?? 'smart',
    steeringMode: options.steeringMode ?? 'oneAtATime',
    followUpMode: options.followUpMode ?? 'oneAtATime',
    steeringInterrupts: options.steeringInterrupts ?? true,
    steeringGraceMs: options.steeringGraceMs ?? 250,
  };
}
