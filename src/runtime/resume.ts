import type { MasterResume } from '../../machines/master.types.js';
import type { ResultsByPosition } from '../../machines/turn.types.js';
import { errorResult } from '../../machines/tool-results.js';
import { toolCallsOf, type Message, type ToolResultMessage } from '../domain/messages.js';
import type { RunCheckpoint, SessionCheckpoint, TurnCheckpoint } from '../store/types.js';
import type { RunStart } from './run-launcher.js';
import { newTurnScope, type AgentState, type RunSession, type TurnScope } from './run-session.js';

export const INTERRUPTED_BY_RESTART = 'interrupted by restart; not re-run';

/** Loads a checkpoint into the agent: history, queues, counters, turn index. */
export function restoreAgent(state: AgentState, checkpoint: SessionCheckpoint): void {
  state.log.reset(checkpoint.history, true);
  Object.assign(state.counters, checkpoint.counters);
  state.steeringQueue = checkpoint.steeringQueue;
  state.followUpQueue = checkpoint.followUpQueue;
  state.turnIndex = checkpoint.turnIndex;
  for (const message of checkpoint.steeringQueue) state.sources.set(message, 'steering');
  for (const message of checkpoint.followUpQueue) state.sources.set(message, 'followUp');
}

/**
 * Where an interrupted run continues. A turn whose reply was committed only lacks its turnEnd
 * (published by `closeCommittedTurn` before the run moves on); a turn whose reply was published
 * continues with its tools, each call that was running when the process died handled by its
 * tool's replay rule; a turn without a reply calls the model again.
 */
export function planResume(state: AgentState, checkpoint: RunCheckpoint): RunStart {
  const base = { kind: 'resumed' as const, runId: checkpoint.runId, nextSeq: checkpoint.nextSeq, pending: checkpoint.pending, modelIndex: checkpoint.modelIndex };
  const turn = checkpoint.turn;
  if (turn && !turn.committed) {
    const scope = restoredTurnScope(state, turn);
    const resume = { reply: scope.reply, results: resumedResults(state, turn), approvedCallIds: turn.approved };
    return { ...base, turnsThisRun: checkpoint.turnsThisRun, at: { at: 'turn', turn: resume }, turn: scope, closeTurn: null };
  }
  // Between turns (or a committed turn that only lacks its turnEnd): the next turn index is known.
  if (turn) state.turnIndex = turn.turnIndex + 1;
  const turnsThisRun = checkpoint.turnsThisRun + (turn ? 1 : 0);
  const scope = turn ? restoredTurnScope(state, turn) : null;
  return { ...base, turnsThisRun, at: nextStepBetweenTurns(state, checkpoint.pending), turn: scope, closeTurn: turn };
}

/** A committed turn interrupted before its turnEnd: publish it, so the resumed run starts between turns. */
export function closeCommittedTurn(run: RunSession, turn: TurnCheckpoint): void {
  const assistant = [...run.agent.history].reverse().find((message) => message.role === 'assistant') ?? null;
  const hasCalls = assistant?.role === 'assistant' && toolCallsOf(assistant).length > 0;
  const results = new Map(turn.results.map((result) => [result.toolCallId, result]));
  const toolResults = assistant?.role === 'assistant' ? toolCallsOf(assistant).flatMap((call) => results.get(call.id) ?? []) : [];
  run.closeTurn();
  run.emit({
    type: 'turnEnd',
    turnIndex: turn.turnIndex,
    reason: hasCalls ? 'toolsExecuted' : 'complete',
    assistant: assistant?.role === 'assistant' ? assistant : null,
    toolResults,
  });
}

function nextStepBetweenTurns(state: AgentState, pending: Message[]): MasterResume {
  const tail = state.history.at(-1);
  const moreWork = pending.length > 0 || state.steeringQueue.length > 0 || tail?.role === 'toolResult' || tail?.role === 'user';
  return moreWork ? { at: 'preTurn' } : { at: 'postLoop' };
}

function restoredTurnScope(state: AgentState, turn: TurnCheckpoint): TurnScope {
  const scope = newTurnScope(turn.turnIndex, true, state.history.length);
  scope.reply = turn.reply ? { called: true, published: false, message: turn.reply.message, error: null, invalidCalls: turn.reply.invalidCalls } : null;
  for (const result of turn.results) scope.announcedEnds.set(result.toolCallId, result);
  for (const id of turn.started) scope.started.add(id);
  for (const id of turn.requested) scope.requested.add(id);
  for (const id of turn.approved) scope.approved.add(id);
  if (turn.pendingApproval) {
    const pending: NonNullable<TurnScope['pendingApproval']> = { ...turn.pendingApproval, early: null, decide: () => {} };
    // A decision that arrives before the resumed turn reaches its approval state is kept for it.
    pending.decide = (decision) => {
      pending.early = decision;
    };
    scope.pendingApproval = pending;
  }
  return scope;
}

/** Results by call position: the published ones, plus the replay rule for calls that were running. */
function resumedResults(state: AgentState, turn: TurnCheckpoint): ResultsByPosition {
  const results = new Map<number, ToolResultMessage>();
  if (!turn.reply) return results;
  const published = new Map(turn.results.map((result) => [result.toolCallId, result]));
  const started = new Set(turn.started);
  toolCallsOf(turn.reply.message).forEach((call, position) => {
    const result = published.get(call.id);
    if (result) results.set(position, result);
    else if (started.has(call.id) && state.registry.get(call.name)?.replay !== 'safe') results.set(position, errorResult(call, INTERRUPTED_BY_RESTART));
  });
  return results;
}
