import type { AgentEvent } from '../../domain/events.js';
import type { Message, MessageInput } from '../../domain/messages.js';
import type { RunResult } from '../../domain/outcomes.js';
import type { ApprovalDecision } from '../../policies/types.js';
import type { AgentOptions } from '../../runtime/options.js';
import type { ScriptEntry } from '../scripted-model.js';

/** What the world may do to the agent besides the model's replies. */
export type Interruption = 'steer' | 'followUp' | 'abort' | 'approve' | 'deny' | 'toolError' | 'modelError' | 'crash';

export const INTERRUPTIONS: readonly Interruption[] = [
  'steer',
  'followUp',
  'abort',
  'approve',
  'deny',
  'toolError',
  'modelError',
  'crash',
];

/** The model's alphabet: each model call is answered with each of these in turn. Named entries read better. */
export type Replies = Readonly<Record<string, ScriptEntry>> | readonly ScriptEntry[];

/** The user's agent: its options, or a function making fresh ones (for tools or policies that keep state). */
export type AgentUnderTest = AgentOptions | (() => AgentOptions);

/** One thing that happened on a path, in order. `label` is what `path` replays. */
export type Step =
  | { kind: 'reply'; label: string; modelCall: number; reply: string }
  | { kind: 'modelError'; label: string; modelCall: number }
  | { kind: 'tool'; label: string; toolCallId: string; toolName: string; outcome: 'ok' | 'error' }
  | { kind: 'approval'; label: string; toolCallId: string; toolName: string; decision: string; value: ApprovalDecision }
  | { kind: 'clock'; label: string; toMs: number }
  | { kind: 'steer' | 'followUp'; label: string; text: string; during: string }
  | { kind: 'abort' | 'crash'; label: string; during: string };

/** What a property sees besides the log and the history. */
export interface PathInfo {
  /** The steps of the path (decisions included, e.g. the arguments an approval gave). */
  steps: readonly Step[];
  /** The run's result; null when it never settled (a hang, itself a violation). */
  result: RunResult | null;
}

/**
 * A property of one path: true, nothing or undefined when it holds; false or a message when it does
 * not. A throw (e.g. a failed `expect`) is a violation with the error's message.
 */
export type Property = (
  log: readonly AgentEvent[],
  messages: readonly Message[],
  path: PathInfo,
) => boolean | string | void;

export interface ExploreOptions {
  /** The model's alphabet: at every model call each reply is tried. */
  replies: Replies;
  /**
   * What the world may do (default: nothing but the replies). `approve` / `deny` answer every approval
   * request (free); the others use the interruption budget. Without approve/deny the agent's own handler answers.
   */
  interruptions?: readonly Interruption[];
  /** More approval answers than approve/deny, by name (e.g. `{ staging: { approved: true, arguments: … } }`). */
  approvals?: Readonly<Record<string, ApprovalDecision>>;
  /** The agent's `maxTurns` while exploring (at most the agent's own). Default 3. */
  maxTurns?: number;
  /** Interruptions per path (steer, followUp, abort, toolError, modelError, crash; approval answers are free). Default 1. */
  maxInterruptions?: number;
  /** Paths explored at most; past it the result says `complete: false` (and assertAgent throws). Default 20,000. */
  maxPaths?: number;
  property?: Property;
  /** The prompt that starts each run. Default 'Go.' */
  prompt?: MessageInput | MessageInput[];
  /**
   * 'callOrder' (default): started tool calls finish in call order; 'any': every order of completion
   * is explored (parallel batches multiply the paths by the orders).
   */
  toolOrder?: 'callOrder' | 'any';
  /** 'stub' (default): tool bodies are replaced by a result `<name> ok`; 'real': the bodies run (deterministic ones). */
  toolBodies?: 'stub' | 'real';
  /** Also land steer/followUp/abort inside event subscribers, at every event (re-entrant calls). Default false. */
  reentrant?: boolean;
  /** Replay one path only (a `replay` string from a violation), e.g. to write its trace. */
  path?: string;
  /** Violations kept (simplest first: fewest interruptions, then fewest steps); the rest are only counted. Default 10. */
  maxViolations?: number;
}

export interface Violation {
  /** The steps that lead to it. */
  path: Step[];
  /** The labels of `path` joined: pass it as `path` to replay exactly this path. */
  replay: string;
  log: AgentEvent[];
  messages: Message[];
  /** Every broken invariant and the property's message, one per line. */
  message: string;
  problems: string[];
}

export interface ExploreResult {
  /** Complete paths checked (runs that ended). */
  paths: number;
  /** Distinct states met (state: the log so far, what the world waits on, the timers and the budget left). */
  states: number;
  /** Executions cut short at a state already explored. */
  pruned: number;
  /** Paths that broke an invariant or the property (the kept ones are in `violations`). */
  violating: number;
  violations: Violation[];
  /** False when `maxPaths` stopped the exploration before the bound was exhausted. */
  complete: boolean;
  /** Longest path (in steps). */
  longest: number;
  elapsedMs: number;
  pathsPerSecond: number;
}
