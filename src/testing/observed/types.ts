import type { AgentEvent } from '../../domain/events.js';
import type { RunResult } from '../../domain/outcomes.js';
import type { Agent, SteerReceipt } from '../../runtime/agent.js';

/**
 * What a driver observed of an agent it drove — the explorer, raceAgent, the project's own
 * interleavings: the log, the runs, the messages it sent, and every call the agent made into the
 * world it controls. One moment counter orders events, aborts, messages sent and those calls.
 */

export interface ObservedRun {
  runId: string | null;
  result: RunResult | null;
  /**
   * Each agent.abort() while this run was running: the log's length then and its moment; `release`
   * is the scheduler tasks released so far (a scheduler driver), `whileWaiting` says the run waited on
   * the world (nothing was decided yet: the abort must win).
   */
  aborts: Array<{ at: number; moment: number; release?: number; whileWaiting?: boolean }>;
  /** Scheduler tasks released when this run's agentEnd was published (a scheduler driver). */
  endedAtRelease?: number | null;
  /** The moment just before prompt() / continue(). */
  startedAt: number;
}

export interface ObservedMessage {
  text: string;
  source: 'steering' | 'followUp';
  receipt: SteerReceipt | null;
  /** Whether history held the message when its receipt resolved. */
  inHistoryWhenResolved: boolean;
  /** The moment of the steer()/followUp() call, and whether a run was going. */
  moment: number;
  duringRun: boolean;
}

/** The agent's calls into the world the driver controls. */
export interface WorldCalls {
  /** Every model request's messages (copied), in call order, across models. */
  requests: Array<{ model: string; messages: unknown[] }>;
  /** Tool executions that really began, by call id. */
  executions: string[];
  /** Approval handler invocations, by call id; null when approvals were answered without a handler. */
  approvalCalls: string[] | null;
  /** Every call into the world (model, tool, approval, policy), with its moment. */
  invocations: Array<{ what: string; moment: number }>;
  /** A provider reported `aborted` by itself (no agent.abort()). */
  providerAborted: boolean;
}

export interface Observed {
  agent: Pick<Agent, 'messages' | 'counters' | 'running' | 'snapshot'>;
  events: readonly AgentEvent[];
  /** The moment of each event; absent when the log is not the one observed live (after a crash: the stored one). */
  momentOf?: readonly number[];
  runs: readonly ObservedRun[];
  sent: readonly ObservedMessage[];
  /** Absent when the world's calls cannot be compared with the counters (after a crash, the dead process made some). */
  world?: WorldCalls;
  /** The agent's `steeringInterrupts`. */
  steeringInterrupts: boolean;
  /** Model calls one turn may make: maxAttempts per model, plus one overflow re-run. */
  modelCallsPerTurn: number;
}
