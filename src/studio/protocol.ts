import type { Counters } from '../domain/counters.js';
import type { AgentEvent } from '../domain/events.js';
import type { Message } from '../domain/messages.js';
import type { PendingApproval, TurnCheckpoint } from '../store/types.js';
import type { StepMachines, StepSummary } from '../store/step-types.js';

/**
 * What the studio's server and page say to each other (types only: the page's script is built
 * from sources that import nothing at run time). Every payload is JSON.
 */

/**
 * An agent event as the page gets it: `t` is when it happened (ms since the epoch: received, or
 * for a stored event the time its step was written); `messages` fields (the context sent to the
 * model, the history at the end of a run) are replaced by their length (or left as the store's
 * history reference); a live turnEnd comes without its reply and results, a live stream's deltas
 * may come coalesced; long strings are cut.
 */
export type WireEvent = (
  | Exclude<AgentEvent, { type: 'beforeModelCall' | 'agentEnd' | 'turnEnd' | 'messageUpdate' }>
  | CoalescedUpdate
  | SlimTurnEnd
  | WithLength<Extract<AgentEvent, { type: 'beforeModelCall' }>>
  | WithLength<Extract<AgentEvent, { type: 'agentEnd' }>>
) & { t: number };
/**
 * A live stream's consecutive deltas of one block may come as one: its text is theirs joined, its
 * seq and time the last one's, `coalesced` how many it stands for (absent: one).
 */
type CoalescedUpdate = Extract<AgentEvent, { type: 'messageUpdate' }> & { coalesced?: number };
/** A live turnEnd leaves out its reply and results (messageEnd, toolExecutionEnd and the history carry them); a stored one may have them. */
type SlimTurnEnd = Omit<Extract<AgentEvent, { type: 'turnEnd' }>, 'assistant' | 'toolResults'> &
  Partial<Pick<Extract<AgentEvent, { type: 'turnEnd' }>, 'assistant' | 'toolResults'>>;
/** The page needs only how many messages: their length, or (a stored event as it is) a history reference. */
type WithLength<E> = Omit<E, 'messages'> & {
  messages: { length: number } | { historyPrefix: number; tail: unknown[] };
};

export interface SessionInfo {
  /** The page's key for the session: its session id, or `live-N` for an agent with no store. */
  id: string;
  label: string;
  /** An agent attached to the studio runs it in this process (live charts, controls). */
  live: boolean;
  /** It has a store: time travel and fork. */
  stored: boolean;
  running: boolean;
  /** The studio can run it (an attached agent, or `agentFor` opens one). */
  controllable: boolean;
  version: number | null;
  updatedAt: number | null;
}

/** The session as it is now, or as a step left it. */
export interface SessionView {
  history: Message[];
  counters: Counters;
  machines: StepMachines;
  approvals: PendingApproval[];
  queues: { steering: Message[]; followUp: Message[] };
  running: boolean;
}

/** A step of time travel, as the page shows it. */
export interface StepView extends StepSummary {
  view: SessionView;
  /** The turn in progress at that step (null between turns). */
  turn: TurnCheckpoint | null;
}

/** The first message of a stream (and its replacement after a page fell behind). */
export interface Hello {
  info: SessionInfo;
  /** The session's events (a live agent without a store: those since it was attached, at most a few thousand). */
  events: WireEvent[];
  /** How many earlier events the page does not have (an agent without a store, attached late). */
  eventsDropped: number;
  steps: StepSummary[] | null;
  now: SessionView;
  /** Sent again after the page fell behind: whatever it showed is replaced. */
  resync: boolean;
}

/** An event of a stream's delta: its time `t` comes beside it (`Delta.at`). */
export type UntimedWireEvent = WireEvent extends infer E ? (E extends unknown ? Omit<E, 't'> : never) : never;

/** What changed since the last message of the stream; absent fields did not change. */
export interface Delta {
  /** New events, in order; event `i` happened at `t0 + at[i]` (ms since the epoch). */
  events?: UntimedWireEvent[];
  t0?: number;
  at?: number[];
  /** The history from position `from` on (usually an append). */
  history?: { from: number; messages: Message[] };
  counters?: Counters;
  machines?: StepMachines;
  approvals?: PendingApproval[];
  queues?: SessionView['queues'];
  running?: boolean;
  info?: SessionInfo;
}

export type StreamMessage = { hello: Hello } | { delta: Delta };

/** What a button on the page does, through the agent's public API. */
export type ControlCommand =
  | { action: 'prompt' | 'steer' | 'followUp'; text: string }
  | { action: 'abort'; reason?: string }
  | {
      action: 'approve' | 'deny' | 'approveWith';
      toolCallId: string;
      version: number;
      arguments?: Record<string, unknown>;
      reason?: string;
    };

/** `POST /api/control`: a command for session `id`. */
export type ControlRequest = ControlCommand & { id: string };

/** The answer: what the API returned (a receipt, a run id), or its typed error. */
export type ControlResponse =
  | {
      ok: true;
      receipt?: { status: 'delivered' | 'stillQueued'; turnIndex?: number };
      runId?: string;
      version?: number;
    }
  | { ok: false; code: string; message: string };

/** `POST /api/fork`. */
export interface ForkRequest {
  id: string;
  /** The step to fork (a version from the step list); absent, the latest. */
  version?: number;
  to?: string;
}
