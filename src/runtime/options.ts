import type { ActorOptions, AnyActorLogic, InspectionEvent, Observer } from 'xstate';
import type { QueueMode } from '../../machines/master.types.js';
import type { ContextTransform } from '../context/guard.js';
import { AgentError } from '../domain/errors.js';
import type { Model } from '../model/port.js';
import type { AgentObserver } from './observer.js';
import type { ApprovalHandler, ApprovalMode, Policies } from '../policies/types.js';
import type { ToolExecution } from '../tools/strategy.js';
import type { AnyTool } from '../tools/types.js';
import { AgentOptionsSchema, describeOptionIssue, misspelledOptions } from './options-schema.js';

/**
 * How failed model attempts are retried (docs/models.md): backoff before retry n is `min(maxDelayMs, baseDelayMs ×
 * 2^(n−1))`.
 */
export interface RetryOptions {
  /** Model attempts per turn and per model, the first call included. */
  maxAttempts: number;
  /** The first backoff. Default 1,000. */
  baseDelayMs: number;
  /** The longest backoff. Default 30,000. */
  maxDelayMs: number;
  /** Full jitter when true: the delay is drawn uniformly from [delay/2, delay]. */
  jitter: boolean;
  /** A provider's retry-after wins over the formula, clamped to this. */
  maxRetryAfterMs: number;
}

/** The time limits of a run, on the agent's clock. */
export interface TimeoutOptions {
  /** A model stream silent this long fails the attempt with kind `timeout` (retryable). Default 600,000. */
  modelIdleMs: number;
  /** A tool still running after this long is aborted with the result `timed out after N ms`. Default: none. */
  toolMs: number;
}

/**
 * What `createAgent` takes (besides the durable options): the model, the tools and how the loop runs. Every option is
 * checked by one schema: a wrong value or a misspelled key is `AgentError('InvalidOptions')`.
 */
export interface AgentOptions {
  /** The model: `openAICompatible`, `anthropic`, `fromAISDK`, or the scripted model in tests. */
  model: Model;
  /**
   * Models that take over, in order, when the current one has used its attempts or fails with an error that is not
   * retried.
   */
  fallbackModels?: Model[];
  /** Sent with every model request. */
  systemPrompt?: string;
  /** The tools the model may call (`defineTool`, or an MCP toolset's `tools`). */
  tools?: AnyTool[];
  /** Functions the loop consults before a turn, before a tool call, after a turn and when the model is done. */
  policies?: Policies;
  /**
   * Answers approval requests. Without it (and without a store) a call that needs approval is refused; with a store,
   * approvals wait for `resolveApproval`.
   */
  approval?: ApprovalHandler;
  /** 'smart' (default): ask for tools marked `requiresApproval`; 'always': every call; 'bypass': never. */
  approvalMode?: ApprovalMode;
  /**
   * How a batch of calls runs: 'parallel' (default), 'sequential', `{ concurrency }`, or `{ partition }` into groups.
   */
  toolExecution?: ToolExecution;
  /** How many queued steering messages a turn takes: 'oneAtATime' (default) or 'all'. */
  steeringMode?: QueueMode;
  /** How many queued follow-ups a turn takes: 'oneAtATime' (default) or 'all'. */
  followUpMode?: QueueMode;
  /**
   * 'buffered' (default): an attempt's deltas are published once the attempt is final, so a retried
   * attempt's partial text never appears. 'live': deltas are published as they arrive; an attempt
   * that already showed content is then never retried (its failure ends the turn with an error).
   */
  streaming?: 'buffered' | 'live';
  /** true (default): steering cancels unfinished tools after `steeringGraceMs`; false: waits for the batch. */
  steeringInterrupts?: boolean;
  /** How long running tools may finish after a steering message before they are cancelled. Default 250. */
  steeringGraceMs?: number;
  /** Retries of failed model attempts; each model gets `maxAttempts` per turn. */
  retry?: Partial<RetryOptions>;
  /** Timers on the agent's clock: model stream silence and tool run time (per tool: `defineTool({ timeoutMs })`). */
  timeouts?: Partial<TimeoutOptions>;
  /** The most turns a run may take; then it ends `maxTurns`. */
  maxTurns?: number;
  /** Report mode: the run ends when the model's call of this tool succeeds (docs/tools.md). */
  finalReport?: { toolName: string };
  /** The context budget in estimated tokens, and an optional transform that replaces the default compaction. */
  context?: { maxTokens?: number; transform?: ContextTransform };
  /** XState clock for every delay (backoff, steering grace, timeouts); `SimulatedClock` in tests. */
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

export interface ResolvedOptions extends Required<
  Pick<
    AgentOptions,
    | 'steeringMode'
    | 'followUpMode'
    | 'steeringInterrupts'
    | 'steeringGraceMs'
    | 'approvalMode'
    | 'toolExecution'
    | 'maxTurns'
  >
> {
  models: Model[];
  retry: RetryOptions;
  timeouts: { modelIdleMs: number; toolMs: number | null };
}

export const DEFAULT_RETRY: RetryOptions = {
  maxAttempts: 3,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  jitter: true,
  maxRetryAfterMs: 60_000,
};
export const DEFAULT_MODEL_IDLE_MS = 600_000;

/**
 * Parses the options with one zod schema: a wrong type, an out-of-range number or an
 * enumerated string that is not one of its values throws `AgentError('InvalidOptions')` naming the
 * option's path; so does a key that looks like a misspelled option. A typo never silently changes
 * behaviour.
 */
export function resolveOptions(options: AgentOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new AgentError('InvalidOptions', 'createAgent needs an options object.');
  }
  let parsed: ReturnType<typeof AgentOptionsSchema.safeParse>;
  try {
    parsed = AgentOptionsSchema.safeParse(options);
  } catch (error) {
    // A getter on the options object that throws.
    const detail = error instanceof Error ? error.message : String(error);
    throw new AgentError('InvalidOptions', `createAgent: the options could not be read: ${detail}`);
  }
  if (!parsed.success) throw new AgentError('InvalidOptions', describeOptionIssue(options, parsed.error.issues));
  const typo = misspelledOptions(options);
  if (typo) throw new AgentError('InvalidOptions', typo);
  const data = parsed.data;
  return {
    models: [options.model, ...(options.fallbackModels ?? [])],
    retry: { ...DEFAULT_RETRY, ...data.retry },
    timeouts: {
      modelIdleMs: data.timeouts?.modelIdleMs ?? DEFAULT_MODEL_IDLE_MS,
      toolMs: data.timeouts?.toolMs ?? null,
    },
    maxTurns: data.maxTurns ?? Number.POSITIVE_INFINITY,
    toolExecution: options.toolExecution ?? 'parallel',
    approvalMode: data.approvalMode ?? 'smart',
    steeringMode: data.steeringMode ?? 'oneAtATime',
    followUpMode: data.followUpMode ?? 'oneAtATime',
    steeringInterrupts: data.steeringInterrupts ?? true,
    steeringGraceMs: data.steeringGraceMs ?? 250,
  };
}
