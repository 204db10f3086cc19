import type { ModelError } from '../src/domain/errors.js';
import type { EndReason, RunStatus } from '../src/domain/events.js';
import type { Message } from '../src/domain/messages.js';
import type { TurnAttempt, TurnFeatures, TurnOutput, TurnResume } from './turn.types.js';

/** Where a run interrupted by a crash continues. */
export type MasterResume = { at: 'turn'; turn: TurnResume } | { at: 'preTurn' } | { at: 'postLoop' };

export type QueueMode = 'oneAtATime' | 'all';

export interface MasterInput {
  /** The first turn's input batch: the prompt, or the queued batch `continue()` drained. */
  newMessages: Message[];
  steeringQueue: Message[];
  followUpQueue: Message[];
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  /** The agent's turn index (it continues across runs of one agent). */
  turnIndex: number;
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
  /** Set when the run resumes after a restart (started with RESUME instead of START). */
  resume: MasterResume | null;
  /** A resumed run continues its turn count and model (a fresh run starts at 0 and the primary model). */
  turnsThisRun?: number;
  modelIndex?: number;
}

export interface MasterContext extends MasterInput {
  /** Messages for the next turn not yet taken (injections, the prompt before the first turn). */
  pending: Message[];
  /** The input batch of the turn in progress (taken from pending and the steering queue). */
  turnInput: Message[];
  turnsThisRun: number;
  modelCalls: number;
  modelIndex: number;
  attemptsOnModel: number;
  overflowUsedThisTurn: boolean;
  failedTurnRetries: number;
  attempt: TurnAttempt;
  lastOutcome: TurnOutput | null;
  retryDelayMs: number;
  status: RunStatus;
  endReason: EndReason;
  error: ModelError | null;
  /** A turn left open by a deferred failure (its re-run will close it). */
  turnOpen: boolean;
  /** An abort arrived while a turn was finishing: the turn may have ended before it saw it. */
  abortRequested: boolean;
  /** Steering was accepted since this turn started: a re-run attempt (after a backoff) must honour it. */
  steeredThisTurn: boolean;
}

export type MasterEvent =
  | { type: 'START' }
  | { type: 'RESUME' }
  | { type: 'STEER'; message: Message }
  | { type: 'FOLLOW_UP'; message: Message }
  | { type: 'ABORT' };

export interface MasterOutput {
  status: RunStatus;
  endReason: EndReason;
  error: ModelError | null;
  steeringQueue: Message[];
  followUpQueue: Message[];
  turnIndex: number;
  modelIndex: number;
}
