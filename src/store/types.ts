import { z } from 'zod';
import { CountersSchema } from '../domain/counters.js';
import {
  AgentEndEventSchema,
  AgentEventSchema,
  BeforeModelCallEventSchema,
  ToolExecutionUpdateEventSchema,
  type AgentEvent,
} from '../domain/events.js';
import { AssistantMessageSchema, MessageSchema, ToolResultMessageSchema } from '../domain/messages.js';
import type { AcquiredLease, Lease, LeaseHolder } from './lease.js';
import type { StepCheckpoint, StepMachines, StepSummary } from './step-types.js';

/** The reply a crashed turn had already published: the resumed turn continues from it. */
export const ResumedReplySchema = z.object({
  message: AssistantMessageSchema,
  invalidCalls: z.array(
    z.object({ id: z.string(), reason: z.enum(['malformedJson', 'truncated']), rawArguments: z.string() }),
  ),
});

export const PendingApprovalSchema = z.object({
  toolCallId: z.string(),
  toolName: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  /** The session version when the approval was requested: `resolveApproval` must name it. */
  version: z.number().int().nonnegative(),
  /** A running call's question (an MCP elicitation) rather than a request to run; the decision answers it. */
  elicitation: z
    .object({
      message: z.string(),
      requestedSchema: z.record(z.string(), z.unknown()),
      server: z.string().optional(),
    })
    .optional(),
});
/** An approval (or a running call's question) waiting for `resolveApproval`, with the session version to quote. */
export type PendingApproval = z.infer<typeof PendingApprovalSchema>;

/** The turn in progress when the checkpoint was taken. */
const TurnCheckpointObject = z.object({
  turnIndex: z.number().int().nonnegative(),
  reply: ResumedReplySchema.nullable(),
  /** Results whose toolExecutionEnd was published, by call id. */
  results: z.array(ToolResultMessageSchema),
  /**
   * Results decided but published only at commit (a denied approval, a skip by pre-dispatch): a
   * resumed turn keeps them rather than deciding again. Absent in sessions stored before it existed.
   */
  decided: z.array(ToolResultMessageSchema).optional(),
  /** Calls whose toolExecutionStart was published. */
  started: z.array(z.string()),
  approved: z.array(z.string()),
  /**
   * The arguments an approval gave calls in place of the model's (approveWith), by call id, as JSON:
   * a resumed call runs with them. Absent in sessions stored before it existed.
   */
  approvedArguments: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  /** Approval requests already published (never asked twice). */
  requested: z.array(z.string()),
  /**
   * The durable approvals the turn waits for: every call of its batch that needs approval, in call order,
   * each with the version it was requested at.
   */
  pendingApprovals: z.array(PendingApprovalSchema).optional(),
  /** Sessions stored when a turn waited for one approval at a time: that approval (read as the list of it). */
  pendingApproval: PendingApprovalSchema.nullable().optional(),
  /** Running calls with a question out (elicitationRequested, not yet resolved). Absent in older sessions. */
  questions: z.array(z.string()).optional(),
  /** The assistant message and its results are in history (only turnEnd was missing). */
  committed: z.boolean(),
});
export const TurnCheckpointSchema = TurnCheckpointObject.transform(
  ({ pendingApproval, pendingApprovals, ...rest }) => ({
    ...rest,
    pendingApprovals: pendingApprovals ?? (pendingApproval ? [pendingApproval] : []),
  }),
);
export type TurnCheckpoint = z.infer<typeof TurnCheckpointSchema>;

export const RunCheckpointSchema = z.object({
  runId: z.string(),
  nextSeq: z.number().int().nonnegative(),
  /** The master's pending messages: the next turn's input. */
  pending: z.array(MessageSchema),
  turnsThisRun: z.number().int().nonnegative(),
  modelIndex: z.number().int().nonnegative(),
  /**
   * Model calls this run made, and attempts of the open turn on its model: a resumed run keeps its
   * retry budget instead of starting it over. Absent in sessions stored before they existed.
   */
  modelCalls: z.number().int().nonnegative().optional(),
  attemptsOnModel: z.number().int().nonnegative().optional(),
  turn: TurnCheckpointSchema.nullable(),
});
export type RunCheckpoint = z.infer<typeof RunCheckpointSchema>;

/** Everything a session needs to resume: history, queues, counters, and the run in flight. */
export const SessionCheckpointSchema = z.object({
  sessionId: z.string().min(1),
  version: z.number().int().nonnegative(),
  history: z.array(MessageSchema),
  steeringQueue: z.array(MessageSchema),
  followUpQueue: z.array(MessageSchema),
  counters: CountersSchema,
  turnIndex: z.number().int().nonnegative(),
  run: RunCheckpointSchema.nullable(),
});
export type SessionCheckpoint = z.infer<typeof SessionCheckpointSchema>;

/** The checkpoint as a step writes it: everything but the history, which is appended separately. */
export const SessionHeadSchema = SessionCheckpointSchema.omit({ history: true }).extend({
  /** The history's length after this step (the store checks its messages add up to it). */
  historyLength: z.number().int().nonnegative(),
});
export type SessionHead = z.infer<typeof SessionHeadSchema>;

/** How the history changed in a step: positions from `from` on are replaced by `messages` (usually an append). */
export const HistoryChangeSchema = z.object({ from: z.number().int().nonnegative(), messages: z.array(MessageSchema) });
export type HistoryChange = z.infer<typeof HistoryChangeSchema>;

/**
 * A `messages` field as stored: the first `historyPrefix` messages of the session's history
 * followed by `tail` (what a context transform changed). A model call at turn 5,000 stores a
 * number, not 10,000 messages.
 */
export const HistoryRefSchema = z.object({
  historyPrefix: z.number().int().nonnegative(),
  tail: z.array(MessageSchema),
});
export type HistoryRef = z.infer<typeof HistoryRefSchema>;

/** An event as stored: an AgentEvent whose `messages` (beforeModelCall, agentEnd) may be a HistoryRef. */
export const StoredEventSchema = z.union([
  AgentEventSchema,
  BeforeModelCallEventSchema.extend({ messages: HistoryRefSchema }),
  AgentEndEventSchema.extend({ messages: HistoryRefSchema }),
  // Stored by earlier versions, which published `ctx.update(undefined)`: JSON dropped the field.
  ToolExecutionUpdateEventSchema.extend({ partial: z.unknown().optional() }).transform((event) => ({
    ...event,
    partial: event.partial,
  })),
]);
export type StoredEvent = z.infer<typeof StoredEventSchema>;

/** Options of the stores that ship with agentchart. */
export interface StoreOptions {
  /** The clock leases expire on (ms since the epoch); `Date.now` by default, a simulated clock in tests. */
  now?: () => number;
}

/** One committed step: the new checkpoint (without history), the history's change, the events since the last step. */
export interface SessionStep {
  checkpoint: SessionHead;
  history: HistoryChange;
  events: StoredEvent[];
  /** The writer's lease token: the step is refused (SessionLost) once a newer token exists. */
  token?: number;
  /** The charts' active states after the step (kept in the step's record for time travel). */
  machines?: StepMachines;
}

/** A stored session, as `store.list()` lists it. */
export interface SessionSummary {
  /** The session's id. */
  sessionId: string;
  /** Its version: the number of steps written. */
  version: number;
  /** Whether a run was in progress at its last step (a crash leaves it so; the next agent resumes it). */
  running: boolean;
  /** When its last step was written (ms since the epoch). */
  updatedAt: number;
}

/**
 * Where sessions live. One `commitStep` is one transaction: the events since the last step, the
 * history's change and the new checkpoint, accepted only if the stored version is
 * `checkpoint.version - 1` (optimistic concurrency: two processes never both advance one session).
 * A step appends: its cost does not grow with the session (no store rewrites the history). The
 * runtime validates every step before it is written, so a store may write it as it is.
 * Async so a server database can implement it; the embedded stores answer synchronously inside
 * the promise.
 */
export interface SessionStore {
  /** The last checkpoint with the whole history, or null for a new session. */
  load(sessionId: string): Promise<SessionCheckpoint | null>;
  /** Writes one step in one transaction; refused with `StaleVersion` or `SessionLost` (a newer owner's token). */
  commitStep(sessionId: string, step: SessionStep): Promise<void>;
  /**
   * Embedded stores also commit synchronously: then every step is on disk before the runtime
   * moves on (a steering message is persisted before `steer()` returns).
   */
  commitStepSync?(sessionId: string, step: SessionStep): void;
  /** The session's events in order, `messages` fields expanded (`from`: skip the first `from` events). */
  loadEvents(sessionId: string, options?: { from?: number }): Promise<AgentEvent[]>;
  /** Every stored session. */
  list(): Promise<SessionSummary[]>;
  /** Deletes the session's data; its lease (and so its fencing token) stays. */
  delete(sessionId: string): Promise<void>;
  /**
   * Takes the session's lease for `ttlMs` (one owner per session). Rejects with `AgentError('SessionBusy')`
   * (owner and expiry in the message) while another owner's lease is live; after it expired, the
   * new owner gets a larger fencing token. The same owner acquiring again extends its lease. With
   * a `holder` (the acquiring process), a live lease whose holder ran on the same host and is gone is
   * taken over at once. The result carries the session's stored version (-1: none yet), so a run
   * knows in the same round trip whether another agent advanced the session.
   */
  acquire(sessionId: string, owner: string, ttlMs: number, holder?: LeaseHolder): Promise<AcquiredLease>;
  /** Extends a lease still held; `AgentError('SessionLost')` once a newer token exists. */
  renew(sessionId: string, lease: Lease, ttlMs: number): Promise<Lease>;
  /** Gives the lease up (another owner may acquire at once); a lease no longer held releases nothing. */
  release(sessionId: string, lease: Lease): Promise<void>;
  /** Embedded stores answer at once: a run then starts (or is refused) inside `prompt()`. */
  acquireSync?(sessionId: string, owner: string, ttlMs: number, holder?: LeaseHolder): AcquiredLease;
  /** `load`, answered at once by an embedded store. */
  loadSync?(sessionId: string): SessionCheckpoint | null;
  /** The session's stored version (-1: none), cheaper than `load` (a parked run watches it). */
  versionOf?(sessionId: string): Promise<number>;
  /**
   * Embedded stores count the agents using them: `attach()` when an agent is created, the returned
   * function when it closes (SQLite then moves its write-ahead log into the main file, and closes
   * the file once the store and every agent on it have closed).
   */
  attach?(): () => void;
  /**
   * Time travel (the stores of agentchart implement it; `forkSession` needs it): every step the
   * store can recover, oldest first ([] for an unknown session).
   */
  steps?(sessionId: string): Promise<StepSummary[]>;
  /** The session as step `version` left it, or null when that step cannot be recovered. */
  loadStep?(sessionId: string, version: number): Promise<StepCheckpoint | null>;
  /**
   * Creates session `to` as step `version` of `from` left it (its history, events and step records
   * up to there), in one transaction; `from` is only read. `to` must not exist (InvalidInput).
   */
  fork?(from: string, to: string, version: number): Promise<void>;
  /**
   * The session's events as stored, JSON text unparsed (`messages` fields may be history references):
   * what a viewer sends on as it is (the studio opens a session of thousands of events without
   * validating each one again). `from` as for `loadEvents`.
   */
  loadEventsJson?(sessionId: string, options?: { from?: number }): Promise<string[]>;
}

/** A store that keeps per-step records (time travel, fork): every store of agentchart. */
export type TimeTravelStore = SessionStore &
  Required<Pick<SessionStore, 'steps' | 'loadStep' | 'fork' | 'loadEventsJson'>>;

export type { AcquiredLease, Lease, LeaseHolder };

export { AgentEventSchema };
