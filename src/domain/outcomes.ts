import { z } from 'zod';
import { CountersSchema } from './counters.js';
import { ModelErrorSchema } from './errors.js';
import { EndReasonSchema, RunStatusSchema, TurnEndReasonSchema } from './events.js';
import { AssistantMessageSchema, MessageSchema, ToolResultMessageSchema } from './messages.js';

export const FinalReportSchema = z.object({
  source: z.enum(['model', 'synthetic']),
  arguments: z.record(z.string(), z.unknown()),
});
/** Report mode's result: the report tool's arguments (`source: 'model'`), or a synthetic failure report. */
export type FinalReport = z.infer<typeof FinalReportSchema>;

/**
 * How a run ended for the agent that started it. Besides the ends of `agentEnd`: `movedOn` — the
 * run parked at a durable approval and another agent (a handle in this process or another) answered
 * it and continues it; its events and end are that agent's (and the store's). Not an error.
 */
export const RunResultStatusSchema = z.enum([...RunStatusSchema.options, 'movedOn']);
export const RunResultEndReasonSchema = z.enum([...EndReasonSchema.options, 'movedOn']);

export const RunResultSchema = z.object({
  status: RunResultStatusSchema,
  endReason: RunResultEndReasonSchema,
  messages: z.array(MessageSchema),
  counters: CountersSchema,
  finalReport: FinalReportSchema.optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
/**
 * How a run ended: `{ status, endReason, messages, counters, finalReport?, error? }`. `run.result` resolves with it
 * and never rejects for model or tool failures.
 */
export type RunResult = z.infer<typeof RunResultSchema>;

/**
 * What one turn reports to the master (the turn machine's output). The turn never retries:
 * `detail` tells the master why a failure happened so it can decide (retry, overflow recovery,
 * fallback, end). `failure` with `retryable`/`overflow` means the master promised a re-run and the
 * turn is still open.
 */
export const TurnOutcomeSchema = z.object({
  kind: z.enum(['success', 'failure', 'finished', 'aborted']),
  detail: z.enum(['overflow', 'retryable', 'steered', 'stopped', 'fatal']).optional(),
  /** The reason its turnEnd carried; null when no turnStart was announced (pre-turn Stop) or the turn stays open. */
  turnEndReason: TurnEndReasonSchema.nullable(),
  /** False only when the turn ended before its input batch was committed. */
  inputCommitted: z.boolean(),
  assistant: AssistantMessageSchema.nullable(),
  /** Results in call order, one per tool call of the assistant message. */
  toolResults: z.array(ToolResultMessageSchema),
  error: ModelErrorSchema.nullable(),
  /** Messages policies injected for the next turn. */
  injected: z.array(MessageSchema),
  /** Calls that really started (synthetic results never count as work). */
  startedCallIds: z.array(z.string()),
});
export type TurnOutcome = z.infer<typeof TurnOutcomeSchema>;
