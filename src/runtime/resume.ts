import type { MasterResume } from '../../machines/master.types.js';
import type { TurnResume } from '../../machines/turn.types.js';
import { errorResult } from '../../machines/tool-results.js';
import { toolCallsOf, type Message, type ToolResultMessage } from '../domain/messages.js';
import { zeroCounters } from '../domain/counters.js';
import type { PendingApproval, RunCheckpoint, SessionCheckpoint, TurnCheckpoint } from '../store/types.js';
import type { AgentState, BetweenRuns } from './run-session.js';

/** The result of a `replay: 'never'` tool call that was running when the process died. */
export const INTERRUPTED_BY_RESTART = 'interrupted by restart; not re-run';

/** How a run starts: fresh with its first messages, or resumed from the checkpoint a restart left. */
export type RunStart =
  /** `drainsQueues`: the new messages are the queues' (continue()): the run starts with them empty. */
  | { kind: 'fresh'; newMessages: Message[]; drainsQueues?: boolean }
  | {
      kind: 'resumed';
      runId: string;
      nextSeq: number;
      pending: Message[];
      turnsThisRun: number;
      modelIndex: number;
      modelCalls: number;
      attemptsOnModel: number;
      at: MasterResume;
      /** The durable approvals the interrupted turn was waiting for (each with the version to quote). */
      pendingApprovals: PendingApproval[];
      /** Calls of the interrupted turn whose question (an elicitation) the restart cut. */
      cutQuestions: { turnIndex: number; calls: Array<{ id: string; name: string }> } | null;
    };

/**
 * Loads the stored session into the agent (at `ready`, and again when another agent advanced it):
 * history, counters, queues, turn index, and the run the store holds unfinished. Null: no session
 * (yet, or deleted meanwhile).
 */
export function restoreSession(state: AgentState, checkpoint: SessionCheckpoint | null): void {
  state.log.reset(checkpoint?.history ?? [], true);
  Object.assign(state.counters, zeroCounters(), checkpoint?.counters ?? {});
  const between: BetweenRuns = {
    steeringQueue: checkpoint?.steeringQueue ?? [],
    followUpQueue: checkpoint?.followUpQueue ?? [],
    turnIndex: checkpoint?.turnIndex ?? 0,
    run: checkpoint?.run ?? null,
  };
  state.between = between;
  for (const message of between.steeringQueue) state.sources.set(message, 'steering');
  for (const message of between.followUpQueue) state.sources.set(message, 'followUp');
  if (state.persister) {
    state.persister.rebase(checkpoint?.version ?? -1);
    state.persister.approvals.pending = [];
  }
}

/**
 * The stored run waits for a durable approval (a store, no approval handler, no durable-execution
 * host): it is parked, and only an answer (or a steer, a follow-up, an abort) continues it.
 */
export function runIsParked(state: AgentState, run: RunCheckpoint): boolean {
  return !state.options.approval && !state.host && (run.turn?.pendingApprovals.length ?? 0) > 0;
}

/** The between-runs state, handed to the run that starts now (its master holds it from here on). */
export function takeBetween(state: AgentState): BetweenRuns {
  const between = state.between ?? { steeringQueue: [], followUpQueue: [], turnIndex: 0, run: null };
  state.between = null;
  return between;
}

/**
 * Where an interrupted run continues. A turn in progress is handed back to the turn machine with
 * what its checkpoint recorded: a committed turn only publishes its turnEnd; a turn whose reply
 * was published continues with its tools, each call that was running when the process died
 * handled by its tool's replay rule; a turn without a reply calls the model again.
 */
export function planResume(state: AgentState, checkpoint: RunCheckpoint): RunStart {
  const base = {
    kind: 'resumed' as const,
    runId: checkpoint.runId,
    nextSeq: checkpoint.nextSeq,
    pending: checkpoint.pending,
    modelIndex: checkpoint.modelIndex,
    turnsThisRun: checkpoint.turnsThisRun,
    modelCalls: checkpoint.modelCalls ?? 0,
    attemptsOnModel: checkpoint.attemptsOnModel ?? 0,
  };
  const turn = checkpoint.turn;
  if (turn) {
    const asked = new Set(turn.questions ?? []);
    const calls = turn.reply ? toolCallsOf(turn.reply.message).filter((call) => asked.has(call.id)) : [];
    const cutQuestions = calls.length > 0 ? { turnIndex: turn.turnIndex, calls } : null;
    const at = { at: 'turn' as const, turn: turnResume(state, turn) };
    return { ...base, at, pendingApprovals: turn.pendingApprovals, cutQuestions };
  }
  return { ...base, at: nextStepBetweenTurns(state, checkpoint.pending), pendingApprovals: [], cutQuestions: null };
}

function nextStepBetweenTurns(state: AgentState, pending: Message[]): MasterResume {
  const tail = state.history.at(-1);
  const steering = state.between?.steeringQueue.length ?? 0;
  const moreWork = pending.length > 0 || steering > 0 || tail?.role === 'toolResult' || tail?.role === 'user';
  return moreWork ? { at: 'preTurn' } : { at: 'postLoop' };
}

function turnResume(state: AgentState, turn: TurnCheckpoint): TurnResume {
  const resume: TurnResume = {
    reply: null,
    results: new Map(),
    notRerun: new Map(),
    startedCallIds: turn.started,
    approvedCallIds: turn.approved,
    approvedArguments: turn.approvedArguments ?? {},
    requestedCallIds: turn.requested,
    committed: turn.committed,
  };
  if (!turn.reply) return resume;
  // A committed turn's assistant is the one in history (a post-turn policy may have replaced it).
  const committedAssistant = turn.committed
    ? [...state.history].reverse().find((message) => message.role === 'assistant')
    : undefined;
  const message = committedAssistant?.role === 'assistant' ? committedAssistant : turn.reply.message;
  const reply = {
    called: true,
    published: true,
    message,
    deltas: [],
    error: null,
    invalidCalls: turn.reply.invalidCalls,
  };
  const published = new Map(turn.results.map((result) => [result.toolCallId, result]));
  const decided = new Map((turn.decided ?? []).map((result) => [result.toolCallId, result]));
  const started = new Set(turn.started);
  const results = new Map<number, ToolResultMessage>();
  const notRerun = new Map<number, ToolResultMessage>();
  toolCallsOf(turn.reply.message).forEach((call, position) => {
    const result = published.get(call.id);
    if (result) results.set(position, result);
    else if (decided.has(call.id)) notRerun.set(position, decided.get(call.id) as ToolResultMessage);
    else if (started.has(call.id) && state.registry.get(call.name)?.replay !== 'safe')
      notRerun.set(position, errorResult(call, INTERRUPTED_BY_RESTART));
  });
  return { ...resume, reply, results, notRerun };
}
