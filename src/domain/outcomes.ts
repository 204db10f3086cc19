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
 * What one turn decided, as one discriminated value (the turn never retries): `kind` and `detail` tell
 * the master why the turn ended so it can decide (retry, overflow recovery, fallback, end). A `failure`
 * with `retryable`/`overflow` is deferred: the master promised a re-run, the turn is still open (no
 * turnEnd reason) and it carries the model error that caused it. Every variant names `detail` (absent on a
 * plain success and an abort), so a check of `detail` alone tells which variant it is.
 */
export const TurnDecisionSchema = z.union([
  z.object({
    kind: z.literal('success'),
    detail: z.undefined().optional(),
    turnEndReason: z.enum(['complete', 'toolsExecuted']),
    error: z.null(),
  }),
  z.object({
    kind: z.literal('success'),
    detail: z.literal('steered'),
    turnEndReason: z.literal('steeringInterrupt'),
    error: z.null(),
  }),
  z.object({
    kind: z.literal('failure'),
    detail: z.enum(['retryable', 'overflow']),
    turnEndReason: z.null(),
    error: ModelErrorSchema,
  }),
  /** A failure the master cannot recover: its turnEnd is out; a reply restored after a restart may carry no error. */
  z.object({
    kind: z.literal('failure'),
    detail: z.literal('fatal'),
    turnEndReason: z.literal('error'),
    error: ModelErrorSchema.nullable(),
  }),
  /** A policy said Stop; no turnEnd reason when it stopped before the turn was announced. */
  z.object({
    kind: z.literal('finished'),
    detail: z.literal('stopped'),
    turnEndReason: TurnEndReasonSchema.nullable(),
    error: z.null(),
  }),
  z.object({
    kind: z.literal('aborted'),
    detail: z.undefined().optional(),
    turnEndReason: z.literal('aborted'),
    error: z.null(),
  }),
]);
export type TurnDecision = z.infer<typeof TurnDecisionSchema>;

/** What the turn leaves for the next one and for history, whatever it decided. */
export const TurnResultsSchema = z.object({
  assistant: AssistantMessageSchema.nullable(),
  /** Results in call order, one per tool call of the assistant message. */
  toolResults: z.array(ToolResultMessageSchema),
  /** Messages policies injected for the next turn. */
  injected: z.array(MessageSchema),
  /** Calls that really started (synthetic results never count as work). */
  startedCallIds: z.array(z.string()),
});

/** What one turn reports to the master (the turn machine's output): its decision and its results. */
export const TurnOutcomeSchema = z.intersection(TurnDecisionSchema, TurnResultsSchema);
export type TurnOutcome = z.infer<typeof TurnOutcomeSchema>;
