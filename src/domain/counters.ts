import { z } from 'zod';

/** The public counters. Every scenario test asserts all of them. */
export const CountersSchema = z.object({
  turns: z.number().int().nonnegative(),
  turnsFailed: z.number().int().nonnegative(),
  modelCalls: z.number().int().nonnegative(),
  retries: z.number().int().nonnegative(),
  modelFallbacks: z.number().int().nonnegative(),
  overflowRecoveries: z.number().int().nonnegative(),
  toolCallsRequested: z.number().int().nonnegative(),
  toolCallsExecuted: z.number().int().nonnegative(),
  toolCallsFailed: z.number().int().nonnegative(),
  toolCallsRejected: z.number().int().nonnegative(),
  toolCallsInvalid: z.number().int().nonnegative(),
  steeringDelivered: z.number().int().nonnegative(),
  followUpsDelivered: z.number().int().nonnegative(),
  approvalsRequested: z.number().int().nonnegative(),
  approvalsDenied: z.number().int().nonnegative(),
  tokensIn: z.number().int().nonnegative(),
  tokensOut: z.number().int().nonnegative(),
  tokensCacheRead: z.number().int().nonnegative(),
  tokensCacheWrite: z.number().int().nonnegative(),
  costUsd: z.number().nonnegative(),
  backoffMs: z.number().nonnegative(),
  failureCodes: z.record(z.string(), z.number().int().nonnegative()),
});
/** What a run did, counted from its events (docs/streaming.md says what each counts). */
export type Counters = z.infer<typeof CountersSchema>;
export type NumericCounter = Exclude<keyof Counters, 'failureCodes'>;

export function zeroCounters(): Counters {
  return {
    turns: 0,
    turnsFailed: 0,
    modelCalls: 0,
    retries: 0,
    modelFallbacks: 0,
    overflowRecoveries: 0,
    toolCallsRequested: 0,
    toolCallsExecuted: 0,
    toolCallsFailed: 0,
    toolCallsRejected: 0,
    toolCallsInvalid: 0,
    steeringDelivered: 0,
    followUpsDelivered: 0,
    approvalsRequested: 0,
    approvalsDenied: 0,
    tokensIn: 0,
    tokensOut: 0,
    tokensCacheRead: 0,
    tokensCacheWrite: 0,
    costUsd: 0,
    backoffMs: 0,
    failureCodes: {},
  };
}

export function cloneCounters(counters: Counters): Counters {
  return { ...counters, failureCodes: { ...counters.failureCodes } };
}
