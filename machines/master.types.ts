import type { ModelError, RunStopCode } from '../src/domain/errors.js';
import type { EndReason, RunStatus } from '../src/domain/events.js';
import type { Message } from '../src/domain/messages.js';
import type { ApprovalVerdict, TurnAttempt, TurnFeatures, TurnOutput, TurnResume } from './turn.types.js';

/** Where a run interrupted by a crash continues. */
export type MasterResume = { at: 'turn'; turn: TurnResume } | { at: 'preTurn' } | { at: 'postLoop' };

export type QueueMode = 'oneAtATime' | 'all';

/** What the session is configured to do; read by the master's guards, never changed by a run. */
export interface MasterConfig {
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  maxTurns: number;
  /** Model attempts per turn and per model (the first call included). */
  maxAttempts: number;
  /** The primary model plus the fallback models. */
  modelCount: number;
  /** Report mode: the session ends only on an accepted final report of this tool. */
  reportToolName: string | null;
  /** Progress-report tools: their calls never make a report-mode turn a success. */
  progressToolNames: string[];
  postLoopPolicies: boolean;
  turnFeatures: TurnFeatures;
}

export interface MasterInput {
  config: MasterConfig;
  /** The first turn's input batch: the prompt, or the queued batch `continue()` drained. */
  newMessages: Message[];
  steeringQueue: Message[];
  followUpQueue: Message[];
  /** The agent's turn index (it continues across runs of one agent). */
  turnIndex: number;
  /** Set when the run resumes after a restart (started with RESUME instead of START). */
  resume: MasterResume | null;
  /**
   * A resumed run continues its turn count, model and retry budget (a fresh run starts at 0 and the
   * primary model).
   */
  turnsThisRun?: number;
  modelIndex?: number;
  modelCalls?: number;
  attemptsOnModel?: number;
}

/** Model calls and turns this run has used (one object: they change together, one copy per step). */
export interface MasterCounts {
  turnsThisRun: number;
  modelCalls: number;
  /** Attempts of the current turn on the current model. */
  attemptsOnModel: number;
  /** Report mode: failed turns retried with guidance in this turn. */
  failedTurnRetries: number;
}

/** The turn being worked on: which attempt runs next and what it has used up. */
export interface TurnProgress {
  attempt: TurnAttempt;
  overflowUsed: boolean;
  /** Steering was accepted since this turn started: a re-run attempt (after a backoff) must honour it. */
  steered: boolean;
  /** After an overflow recovery: the compacted context every later attempt of this turn sends. */
  overflowView: Message[] | null;
}

/** Why the runtime stopped the run: a step could not be written, or a newer lease fenced this agent. */
export interface RunStopError {
  code: RunStopCode;
  message: string;
}

/**
 * How the run ended: assigned where it is decided. The chart decides from the run's course (a failed turn's
 * model error with it); a STOP from the runtime decides at the moment it arrives, and nothing after it changes.
 */
export type RunEnd =
  | { by: 'chart'; status: RunStatus; endReason: EndReason; error: ModelError | null }
  | { by: 'runtime'; status: 'failed'; endReason: 'fatalError'; error: RunStopError };

/** The master's context: few keys of stable shape (see TurnContext on V8's dictionary mode). */
export interface MasterContext {
  config: MasterConfig;
  resume: MasterResume | null;
  /** Messages for the next turn not yet taken (injections, the prompt before the first turn). */
  pending: Message[];
  /** The input batch of the turn in progress (taken from pending and the steering queue). */
  turnInput: Message[];
  steeringQueue: Message[];
  followUpQueue: Message[];
  turnIndex: number;
  modelIndex: number;
  counts: MasterCounts;
  turn: TurnProgress;
  lastOutcome: TurnOutput | null;
  retryDelayMs: number;
  /** An abort (or a STOP) arrived while a turn was finishing: the turn may have ended before it saw it. */
  abortRequested: boolean;
  end: RunEnd;
}

export type MasterEvent =
  | { type: 'START' }
  | { type: 'RESUME' }
  | { type: 'STEER'; message: Message }
  | { type: 'FOLLOW_UP'; message: Message }
  | { type: 'ABORT' }
  /** The runtime ends the run (its store failed, or a newer lease fenced it): like ABORT, but the run ends failed. */
  | { type: 'STOP'; error: RunStopError }
  /** `resolveApproval` answered a stored approval: forwarded to the turn. */
  | { type: 'APPROVAL_DECIDED'; toolCallId: string; verdict: ApprovalVerdict };

/** How the run ended (as the chart decided it) and what it leaves for the next run. */
export type MasterOutput = RunEnd & {
  steeringQueue: Message[];
  followUpQueue: Message[];
  turnIndex: number;
  modelIndex: number;
};
