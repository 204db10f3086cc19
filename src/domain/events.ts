import { z } from 'zod';
import { CountersSchema } from './counters.js';
import { ModelErrorSchema } from './errors.js';
import { AssistantMessageSchema, MessageSchema, ToolResultMessageSchema } from './messages.js';

/** Fields every event carries. `turnIndex` is present while a turn is open. */
const base = {
  runId: z.string(),
  seq: z.number().int().nonnegative(),
  turnIndex: z.number().int().nonnegative().optional(),
};
const inTurn = { ...base, turnIndex: z.number().int().nonnegative() };

export const MessageDeltaSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), index: z.number().int().nonnegative(), text: z.string() }),
  z.object({ type: z.literal('thinking'), index: z.number().int().nonnegative(), text: z.string() }),
  z.object({
    type: z.literal('toolCall'),
    index: z.number().int().nonnegative(),
    id: z.string(),
    name: z.string(),
    argumentsDelta: z.string(),
  }),
]);
export type MessageDelta = z.infer<typeof MessageDeltaSchema>;

export const TurnEndReasonSchema = z.enum([
  'complete',
  'toolsExecuted',
  'steeringInterrupt',
  'stopped',
  'error',
  'aborted',
]);
export type TurnEndReason = z.infer<typeof TurnEndReasonSchema>;

export const RunStatusSchema = z.enum(['completed', 'failed', 'aborted']);
/** How a run ended: 'completed', 'failed' or 'aborted'. */
export type RunStatus = z.infer<typeof RunStatusSchema>;

export const EndReasonSchema = z.enum([
  'naturalEnd',
  'finalReport',
  'maxTurns',
  'retryExhausted',
  'policyStop',
  'aborted',
  'fatalError',
]);
/**
 * Why a run ended: 'naturalEnd', 'finalReport', 'maxTurns', 'retryExhausted', 'policyStop', 'aborted' or
 * 'fatalError'.
 */
export type EndReason = z.infer<typeof EndReasonSchema>;

export const PolicySlotSchema = z.enum([
  'preTurn',
  'preDispatch',
  'postTurn',
  'postLoop',
  'approval',
  'contextTransform',
]);
export type PolicySlot = z.infer<typeof PolicySlotSchema>;

/** How an elicitation was answered, in MCP's words. */
export const ElicitationActionSchema = z.enum(['accept', 'decline', 'cancel']);
export type ElicitationAction = z.infer<typeof ElicitationActionSchema>;

const ContextSizeSchema = z.object({ messages: z.number().int().nonnegative(), tokens: z.number().nonnegative() });

/** `provider`: the model's `provider` (e.g. 'openai'), when the Model port names one. */
export const BeforeModelCallEventSchema = z.object({
  type: z.literal('beforeModelCall'),
  ...inTurn,
  model: z.string(),
  provider: z.string().optional(),
  messages: z.array(MessageSchema),
});

export const AgentEndEventSchema = z.object({
  type: z.literal('agentEnd'),
  ...base,
  status: RunStatusSchema,
  endReason: EndReasonSchema,
  messages: z.array(MessageSchema),
  counters: CountersSchema,
  /** Why a failed or aborted run ended (the abort's reason for an aborted one); as in RunResult.error. */
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

/** A tool's progress update (`ctx.update(partial)`): `partial` is a JSON value, or the update is refused. */
export const ToolExecutionUpdateEventSchema = z.object({
  type: z.literal('toolExecutionUpdate'),
  ...inTurn,
  toolCallId: z.string(),
  toolName: z.string(),
  partial: z.unknown(),
});

export const AgentEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('agentStart'), ...base }),
  /** `steeringDelivered`: how many steering messages this turn's input delivers (absent when none). */
  z.object({ type: z.literal('turnStart'), ...inTurn, steeringDelivered: z.number().int().positive().optional() }),
  BeforeModelCallEventSchema,
  z.object({ type: z.literal('messageStart'), ...inTurn, message: AssistantMessageSchema }),
  z.object({ type: z.literal('messageUpdate'), ...inTurn, delta: MessageDeltaSchema }),
  /** `error`: the classified error of a reply that failed or was aborted (the attempt's last word). */
  z.object({
    type: z.literal('messageEnd'),
    ...inTurn,
    message: AssistantMessageSchema,
    error: ModelErrorSchema.optional(),
  }),
  z.object({
    type: z.literal('toolApprovalRequested'),
    ...inTurn,
    toolCallId: z.string(),
    toolName: z.string(),
    arguments: z.record(z.string(), z.unknown()),
  }),
  z.object({
    type: z.literal('toolApprovalResolved'),
    ...inTurn,
    toolCallId: z.string(),
    toolName: z.string(),
    approved: z.boolean(),
  }),
  /**
   * A running tool asks the host a question (an MCP server's elicitation): answered by the approval
   * handler, or with a store and no handler by `resolveApproval` (listed by `pendingApprovals()`).
   */
  z.object({
    type: z.literal('elicitationRequested'),
    ...inTurn,
    toolCallId: z.string(),
    toolName: z.string(),
    server: z.string().optional(),
    message: z.string(),
    requestedSchema: z.record(z.string(), z.unknown()),
  }),
  /** `reason`: why it was declined or cancelled (no handler, a denial, the call was cancelled). */
  z.object({
    type: z.literal('elicitationResolved'),
    ...inTurn,
    toolCallId: z.string(),
    toolName: z.string(),
    action: ElicitationActionSchema,
    reason: z.string().optional(),
  }),
  z.object({
    type: z.literal('toolExecutionStart'),
    ...inTurn,
    toolCallId: z.string(),
    toolName: z.string(),
    arguments: z.record(z.string(), z.unknown()),
  }),
  ToolExecutionUpdateEventSchema,
  z.object({
    type: z.literal('toolExecutionEnd'),
    ...inTurn,
    toolCallId: z.string(),
    toolName: z.string(),
    result: z.string(),
    isError: z.boolean(),
  }),
  z.object({
    type: z.literal('turnEnd'),
    ...inTurn,
    reason: TurnEndReasonSchema,
    assistant: AssistantMessageSchema.nullable(),
    toolResults: z.array(ToolResultMessageSchema),
  }),
  z.object({
    type: z.literal('retry'),
    ...base,
    attempt: z.number().int().positive(),
    delayMs: z.number().nonnegative(),
    error: ModelErrorSchema,
  }),
  /** `error`: the failure of the last attempt on `from` that made the run fall back. */
  z.object({
    type: z.literal('modelFallback'),
    ...base,
    from: z.string(),
    to: z.string(),
    error: ModelErrorSchema.optional(),
  }),
  z.object({ type: z.literal('contextCompacted'), ...base, before: ContextSizeSchema, after: ContextSizeSchema }),
  /** A tool source (an MCP server) changed its list; applied between turns, just before the next turnStart. */
  z.object({
    type: z.literal('toolsChanged'),
    ...base,
    added: z.array(z.string()),
    removed: z.array(z.string()),
    updated: z.array(z.string()),
  }),
  /** A policy or approval hook threw; it counted as Continue (added to the contract, see README). */
  z.object({ type: z.literal('policyError'), ...base, slot: PolicySlotSchema, message: z.string() }),
  AgentEndEventSchema,
]);

/**
 * Everything a run does, as events in order (docs/streaming.md lists them); each has `type`, `runId`, `seq` and
 * `turnIndex` while a turn is open.
 */
export type AgentEvent = z.infer<typeof AgentEventSchema>;
/** The `type` of an event. */
export type AgentEventType = AgentEvent['type'];
/** The event of one type: `AgentEventOf<'toolExecutionEnd'>`. */
export type AgentEventOf<T extends AgentEventType> = Extract<AgentEvent, { type: T }>;
/** An event before the runtime stamps `runId` and `seq` on it. */
export type AgentEventBody = AgentEvent extends infer E
  ? E extends AgentEvent
    ? Omit<E, 'runId' | 'seq'>
    : never
  : never;
