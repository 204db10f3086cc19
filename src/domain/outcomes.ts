import { z } from 'zod';
import { CountersSchema } from './counters.js';
import { ModelErrorSchema } from './errors.js';
import { EndReasonSchema, RunStatusSchema, TurnEndReasonSchema } from './events.js';
import { AssistantMessageSchema, MessageSchema, ToolResultMessageSchema } from './messages.js';

export const FinalReportSchema = z.object({
  source: z.enum(['model', 'synthetic']),
  arguments: z.record(z.string(), z.unknown()),
});
export type FinalReport = z.infer<typeof FinalReportSchema>;

export const RunResultSchema = z.object({
  status: RunStatusSchema,
  endReason: EndReasonSchema,
  messages: z.array(MessageSchema),
  counters: CountersSchema,
  finalReport: FinalReportSchema.optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
export type RunResult = z.infer<typeof RunResultSchema>;

/**
 * What one turn reports to the master. The turn never retries: `detail` tells the master why a
 * failure happened so it can decide (retry, overflow recovery, fallback, end).
 */
export const TurnOutcomeSchema = z.object({
  kind: z.enum(['success', 'failure', 'finished', 'aborted']),
  detail: z.enum(['overflow', 'retryable', 'steered', 'stopped', 'fatal']).optional(),
  turnEndReason: TurnEndReasonSchema.optional(),
  assistant: AssistantMessageSchema.nullable(),
  toolResults: z.array(ToolResultMessageSchema),
  /** Messages this turn committed to history, in order (inputs, assistant, results, injections). */
  committed: z.array(MessageSchema),
  error: ModelErrorSchema.optional(),
  /** Steering messages the turn took from the queue; the master delivers them next. */
  steering: z.array(MessageSchema),
  /** Messages policies injected for the next model call. */
  injected: z.array(MessageSchema),
  counters: CountersSchema.partial(),
  stopReason: z.string().optional(),
});
export type TurnOutcome = z.infer<typeof TurnOutcomeSchema>;
