import type { ModelReply } from '../../machines/turn.types.js';
import type { MessageDelta } from '../domain/events.js';
import type { ToolRunResult } from '../tools/run.js';

/** A model attempt as a durable engine records it: the final reply and the deltas that led to it. */
export interface RecordedAttempt {
  reply: Omit<ModelReply, 'published'>;
  deltas: MessageDelta[];
}

/** A tool call as a durable engine records it: the result and the progress updates it sent. */
export interface RecordedToolCall {
  result: ToolRunResult;
  updates: unknown[];
}

/**
 * Where a run's effects go when the session runs on a durable-execution engine (agentchart/restate):
 * each model attempt and tool call becomes a journaled step, and whatever a replay must reproduce
 * (the run id, the backoff jitter) comes from the engine. Without a host the runtime calls the
 * model and the tools directly. Not public API: the restate entry point supplies it.
 */
export interface EffectHost {
  /** The id of a new run (the same on every replay of the run). */
  newRunId(): string;
  /** A number in [0, 1) for the backoff jitter (the same on every replay). */
  random(): number;
  /** Runs one model attempt at most once; a recorded attempt (a failed one too) is returned as recorded. */
  modelAttempt(key: string, attempt: () => Promise<RecordedAttempt>): Promise<RecordedAttempt>;
  /** Runs one tool call under its replay rule; `execute` reports progress through its argument. */
  toolCall(
    call: { id: string; name: string; replay: 'never' | 'safe' },
    execute: (update: (partial: unknown) => void) => Promise<ToolRunResult>,
  ): Promise<RecordedToolCall>;
  /**
   * User code the runtime awaits outside any step (policies, approval handlers, context transforms):
   * the host waits for it before it waits for the engine, so a replay issues steps in the same order.
   */
  track<T>(work: Promise<T>): Promise<T>;
}
