import { z } from 'zod';
import { MessageSchema } from '../domain/messages.js';

/** An approval decision exactly as `resolveApproval` allows it; anything else is refused (InvalidInput). */
export const ApprovalDecisionSchema = z.union([
  z.strictObject({ approved: z.literal(true) }),
  z.strictObject({ approved: z.literal(true), arguments: z.record(z.string(), z.unknown()) }),
  z.strictObject({ approved: z.literal(false), reason: z.string().optional() }),
]);

export const ResolveApprovalInputSchema = z.strictObject({
  toolCallId: z.string().min(1),
  decision: ApprovalDecisionSchema,
  version: z.number().int().nonnegative(),
});

export const EventsInputSchema = z.strictObject({
  /** Events with `seq > afterSeq` (seq counts per run); -1 means all. */
  afterSeq: z.number().int().min(-1),
  /** Only this run's events (default: every run of the session, in order). */
  runId: z.string().min(1).optional(),
});

/**
 * What the shared handlers hand to a run through the session's inbox. `receipt` is an awakeable the
 * sender waits on for the steer/followUp receipt.
 */
export const InboxItemSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.enum(['steer', 'followUp']), message: MessageSchema, receipt: z.string() }),
  z.object({
    kind: z.literal('approval'),
    toolCallId: z.string(),
    decision: ApprovalDecisionSchema,
    version: z.number().int(),
  }),
  z.object({ kind: z.literal('abort'), reason: z.string().optional() }),
]);
export type InboxItem = z.infer<typeof InboxItemSchema>;

/** Where the run in progress can be cancelled (written by `prompt` while it runs). */
export const ActiveRunSchema = z.object({ invocationId: z.string() });
export type ActiveRun = z.infer<typeof ActiveRunSchema>;

/** The inbox of session `s` is the same virtual object under this key: its own lock, its own state. */
export const INBOX_PREFIX = '~inbox~';
export const inboxKey = (sessionId: string) => `${INBOX_PREFIX}${sessionId}`;
