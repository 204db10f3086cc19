import type { AnyActorRef } from 'xstate';
import type { MasterContext } from '../../machines/master.types.js';
import { settledByPosition } from '../../machines/tool-results.js';
import type { ToolCallContext, ToolCallOutput } from '../../machines/tool-call.machine.js';
import { awaitingApproval } from '../../machines/turn.approvals.js';
import { startedCallIds, type TurnContext } from '../../machines/turn.context.js';
import type { TurnOutput } from '../../machines/turn.types.js';
import { cloneCounters } from '../domain/counters.js';
import { toolCallsOf, type ToolResultMessage } from '../domain/messages.js';
import type { Message } from '../domain/messages.js';
import type { PendingApproval, RunCheckpoint, SessionHead, TurnCheckpoint } from '../store/types.js';
import { publishedArguments } from './published-arguments.js';
import type { AgentState, RunSession } from './run-session.js';

/**
 * The checkpoint (the session's head: everything but the history, which is stored by appending), derived in one place from the machines' state: the master's context, the turn
 * actor's snapshot and its tool-call children. Nothing here is a copy the runtime kept on the side;
 * the runtime only decides when to take it (after each step that changed something).
 */

interface Snapshot<TContext> {
  status: 'active' | 'done' | 'error' | 'stopped';
  value: unknown;
  context: TContext;
  output?: unknown;
  children: Record<string, AnyActorRef | undefined>;
  matches(value: unknown): boolean;
}

/** The turn in progress as the machines know it: the turn actor, and whether its turnStart is out. */
export interface TurnView {
  /** The turn actor's snapshot; null between the attempts of a turn a deferred failure left open. */
  snapshot: Snapshot<TurnContext> | null;
  turnIndex: number;
  /** Its tool-call actors. */
  calls: readonly AnyActorRef[];
}

/** The turn actor the master runs now (a turn or the closing of one), if any. */
export function turnActorOf(master: Snapshot<MasterContext>): AnyActorRef | null {
  const children = master.children;
  return children.turn ?? children.closingTurn ?? null;
}

/**
 * The open turn (its turnStart published, its turnEnd not yet), or null. `closed` tells a turn
 * that ended in this very step (the master has not taken its outcome yet).
 */
export function openTurnOf(
  master: Snapshot<MasterContext>,
  run: Pick<RunSession, 'callActors'>,
): { turn: TurnView | null; closedNow: boolean } {
  const actor = turnActorOf(master);
  const calls = callActorsOf(run, actor);
  if (actor) {
    const snapshot = actor.getSnapshot() as Snapshot<TurnContext>;
    const context = snapshot.context;
    const turnIndex = context.input.turnIndex;
    if (snapshot.status === 'done') {
      const output = snapshot.output as TurnOutput;
      if (output.turnEndReason !== null) return { turn: null, closedNow: true };
      return { turn: isDeferred(output) ? { snapshot, turnIndex, calls } : null, closedNow: false };
    }
    const announced = context.input.attempt !== 'fresh' || !snapshot.matches('USER_INPUT');
    return { turn: announced ? { snapshot, turnIndex, calls } : null, closedNow: false };
  }
  const outcome = master.context.lastOutcome;
  const open = outcome !== null && isDeferred(outcome) && !master.matches('ended');
  return { turn: open ? { snapshot: null, turnIndex: master.context.turnIndex, calls: [] } : null, closedNow: false };
}

const isDeferred = (outcome: TurnOutput) =>
  outcome.kind === 'failure' && (outcome.detail === 'retryable' || outcome.detail === 'overflow');

/** Where the persister keeps the version each durable approval request was first stored at. */
export interface ApprovalVersions {
  /** The session waits for `resolveApproval` (a store and no approval handler). */
  readonly durable: boolean;
  pending: PendingApproval[];
}

/** The session's queues, turn index and durable approval now, as `sessionView` reads them. */
export interface SessionView {
  steeringQueue: readonly Message[];
  followUpQueue: readonly Message[];
  turnIndex: number;
  /** The durable approvals the session waits for, in call order (each with the version `resolveApproval` must quote). */
  pendingApprovals: PendingApproval[];
}

/** The master of the run in progress, if one runs. */
function masterOf(run: RunSession | null): Snapshot<MasterContext> | undefined {
  return run && !run.ended ? (run.master?.getSnapshot() as Snapshot<MasterContext> | undefined) : undefined;
}

/**
 * The one reading of the session's run state: from the master's context while a run is in progress
 * (its queues, its turn index, the approval its turn waits for), else from the between-runs record.
 * `snapshot()`, `pendingApprovals()` and every checkpoint read it here; nothing keeps a copy.
 */
export function sessionView(agent: AgentState): SessionView {
  const run = agent.run;
  const master = masterOf(run);
  if (master && run) {
    const { context } = master;
    const closedNow = openTurnOf(master, run).closedNow ? 1 : 0;
    const approvals = agent.persister?.approvals;
    return {
      steeringQueue: context.steeringQueue,
      followUpQueue: context.followUpQueue,
      turnIndex: context.turnIndex + closedNow,
      pendingApprovals: approvals ? currentPendingApprovals(run, approvals) : [],
    };
  }
  const between = agent.between;
  const stored = between?.run?.turn?.pendingApprovals ?? [];
  return {
    steeringQueue: between?.steeringQueue ?? [],
    followUpQueue: between?.followUpQueue ?? [],
    turnIndex: between?.turnIndex ?? 0,
    pendingApprovals: agent.persister?.approvals.durable ? stored : [],
  };
}

export function checkpointOf(
  sessionId: string,
  version: number,
  agent: AgentState,
  run: RunSession | null,
  approvals: ApprovalVersions,
): SessionHead {
  const master = masterOf(run);
  const context = master?.context;
  const open = master && run ? openTurnOf(master, run) : { turn: null, closedNow: false };
  const closedNow = open.closedNow ? 1 : 0;
  const turn = open.turn ? turnCheckpoint(open.turn, version, approvals, run?.openQuestions) : null;
  if (!turn) approvals.pending = [];
  const view = sessionView(agent);
  return {
    sessionId,
    version,
    historyLength: agent.log.length,
    steeringQueue: [...view.steeringQueue],
    followUpQueue: [...view.followUpQueue],
    counters: cloneCounters(agent.counters),
    turnIndex: view.turnIndex,
    // No run here: a run the store holds unfinished (parked at an approval) stays as it is.
    run:
      run && context && !run.ended
        ? runCheckpoint(run, context, master, closedNow, turn)
        : (agent.between?.run ?? null),
  };
}

function runCheckpoint(
  run: RunSession,
  context: MasterContext,
  master: Snapshot<MasterContext> | undefined,
  closedNow: number,
  turn: TurnCheckpoint | null,
): RunCheckpoint {
  // A turn that has not committed its input yet: the input goes back to pending (never lost).
  const turnActor = master ? turnActorOf(master) : null;
  const uncommitted = turnActor ? inputUncommitted(turnActor.getSnapshot() as Snapshot<TurnContext>) : false;
  return {
    runId: run.runId,
    nextSeq: run.nextSeq,
    pending: [...(uncommitted ? context.turnInput : []), ...context.pending],
    turnsThisRun: context.counts.turnsThisRun + closedNow,
    modelIndex: context.modelIndex,
    ...retryBudget(context, master, closedNow),
    turn,
  };
}

/**
 * The model calls the run has made, and the open turn's attempts on its model, as a resumed run
 * continues them. Entering the turn counts an attempt, and a resumed run enters it again: the
 * attempt in progress is left out (the resumed one is that attempt, re-run). A turn that just closed
 * leaves the next one a fresh allowance.
 */
function retryBudget(
  context: MasterContext,
  master: Snapshot<MasterContext> | undefined,
  closedNow: number,
): { modelCalls: number; attemptsOnModel: number } {
  const inTurn = !closedNow && master?.matches({ running: 'turn' }) ? 1 : 0;
  const { modelCalls, attemptsOnModel } = context.counts;
  return {
    modelCalls: Math.max(0, modelCalls - inTurn),
    attemptsOnModel: closedNow ? 0 : Math.max(0, attemptsOnModel - inTurn),
  };
}

function inputUncommitted(snapshot: Snapshot<TurnContext>): boolean {
  return snapshot.status === 'active' && snapshot.context.input.attempt === 'fresh' && snapshot.matches('USER_INPUT');
}

function turnCheckpoint(
  view: TurnView,
  version: number,
  approvals: ApprovalVersions,
  questions: ReadonlySet<string> = new Set(),
): TurnCheckpoint {
  const empty: TurnCheckpoint = {
    turnIndex: view.turnIndex,
    reply: null,
    results: [],
    started: [],
    approved: [],
    requested: [],
    pendingApprovals: [],
    committed: false,
  };
  const snapshot = view.snapshot;
  if (!snapshot) {
    approvals.pending = [];
    return empty;
  }
  const context = snapshot.context;
  const deferred = snapshot.status === 'done' && isDeferred(snapshot.output as TurnOutput);
  const reply = context.reply && !deferred ? context.reply : null;
  const committed = snapshot.matches('RESPONSE') || snapshot.matches('done');
  const pendingApprovals = approvals.durable ? pendingApprovalsOf(snapshot, version, approvals) : [];
  return {
    ...empty,
    reply: reply ? { message: reply.message, invalidCalls: [...reply.invalidCalls] } : null,
    results: reply ? publishedResults(snapshot, view.calls, committed) : [],
    decided: reply && !committed ? decidedResults(context) : [],
    started: startedOf(snapshot, view.calls),
    approved: [...new Set([...(context.input.resume?.approvedCallIds ?? []), ...approvedIds(context)])],
    ...approvedArgumentsOf(context),
    requested: [...context.asked],
    pendingApprovals,
    ...(questions.size > 0 ? { questions: [...questions] } : {}),
    committed,
  };
}

/** Results whose toolExecutionEnd is out: from the tool-call actors (settled or just done), and all of them once committed. */
function publishedResults(
  snapshot: Snapshot<TurnContext>,
  calls: readonly AnyActorRef[],
  committed: boolean,
): ToolResultMessage[] {
  const context = snapshot.context;
  const cells = settledByPosition(context.settled);
  const byPosition = new Map<number, ToolResultMessage>();
  for (const [position, cell] of cells) if (committed || cell.published) byPosition.set(position, cell.result);
  for (const call of calls) {
    const callSnapshot = call.getSnapshot() as { status: string; output?: ToolCallOutput };
    if (callSnapshot.status !== 'done' || !callSnapshot.output) continue;
    if (!byPosition.has(callSnapshot.output.position))
      byPosition.set(callSnapshot.output.position, callSnapshot.output.result);
  }
  const blocks = context.reply ? toolCallsOf(context.reply.message) : [];
  return blocks.flatMap((_, position) => byPosition.get(position) ?? []);
}

/** Calls whose toolExecutionStart is out: settled ones, and tool-call actors that left `starting`. */
function startedOf(snapshot: Snapshot<TurnContext>, calls: readonly AnyActorRef[]): string[] {
  const ids = startedCallIds(snapshot.context);
  for (const call of calls) {
    const context = (call.getSnapshot() as { context?: ToolCallContext }).context;
    if (context?.started && !ids.includes(context.call.id)) ids.push(context.call.id);
  }
  return ids;
}

/** The tool-call actors of a turn actor (the run keeps them for the turn in progress). */
export function callActorsOf(run: Pick<RunSession, 'callActors'>, turn: AnyActorRef | null): readonly AnyActorRef[] {
  return turn && run.callActors.turn === turn.sessionId ? run.callActors.actors : [];
}

/** Results decided and not published yet (they are published at commit). */
function decidedResults(context: TurnContext): ToolResultMessage[] {
  return [...settledByPosition(context.settled).values()].filter((cell) => !cell.published).map((cell) => cell.result);
}

/** The arguments approvals gave calls (approveWith), as JSON, if any: a resumed call runs with them. */
function approvedArgumentsOf(context: TurnContext): Pick<TurnCheckpoint, 'approvedArguments'> {
  const rewritten: Record<string, Record<string, unknown>> = { ...context.input.resume?.approvedArguments };
  for (const entry of context.prepared)
    if (entry.approved && entry.rewritten) rewritten[entry.call.id] = publishedArguments(entry.call.arguments);
  return Object.keys(rewritten).length > 0 ? { approvedArguments: rewritten } : {};
}

function approvedIds(context: TurnContext): string[] {
  return context.prepared
    .filter((entry) => entry.approved && context.asked.includes(entry.call.id))
    .map((entry) => entry.call.id);
}

/**
 * The durable approvals waiting for `resolveApproval`, each with the version it was first stored at:
 * every call the turn waits on, or (a resumed turn on its way there) those its checkpoint recorded
 * and not decided since.
 */
export function pendingApprovalsOf(
  snapshot: Snapshot<TurnContext>,
  version: number,
  approvals: ApprovalVersions,
): PendingApproval[] {
  approvals.pending = waitingApprovals(snapshot, approvals.pending, version);
  return approvals.pending;
}

function waitingApprovals(
  snapshot: Snapshot<TurnContext>,
  known: readonly PendingApproval[],
  version: number,
): PendingApproval[] {
  if (snapshot.status !== 'active' || snapshot.matches('RESPONSE')) return [];
  const context = snapshot.context;
  // A stored session with no handler: the published requests wait for resolveApproval, all at once.
  if (snapshot.matches({ TOOL_EXECUTION: { askingApproval: 'waiting' } })) {
    return awaitingApproval(context).map(({ call }) => ({
      toolCallId: call.id,
      toolName: call.name,
      arguments: publishedArguments(call.arguments),
      version: known.find((pending) => pending.toolCallId === call.id)?.version ?? version,
    }));
  }
  return known.filter((pending) => !decided(context, pending.toolCallId));
}

/** The call got a verdict (approved, settled with a result, or an answer the turn keeps) in this attempt. */
function decided(context: TurnContext, toolCallId: string): boolean {
  if (context.prepared.some((entry) => entry.call.id === toolCallId && entry.approved)) return true;
  if (context.decisions.some((decision) => decision.toolCallId === toolCallId)) return true;
  for (let cell = context.settled; cell; cell = cell.rest) if (cell.result.toolCallId === toolCallId) return true;
  return false;
}

/** The durable approvals the run waits for now (for `pendingApprovals()` and `resolveApproval`). */
export function currentPendingApprovals(run: RunSession | null, approvals: ApprovalVersions): PendingApproval[] {
  const snapshot = approvals.durable ? turnSnapshotOf(run) : null;
  // Not stored yet (version -1): not listed until the step that asks is stored.
  return snapshot ? waitingApprovals(snapshot, approvals.pending, -1).filter((pending) => pending.version >= 0) : [];
}

/**
 * The run has nothing to do but wait for durable approvals (its turn waits on stored requests): it can
 * park. A resumed turn on its way to its requests is still working.
 */
export function waitsOnlyForApprovals(run: RunSession, approvals: ApprovalVersions): boolean {
  const snapshot = turnSnapshotOf(run);
  return (
    snapshot !== null &&
    snapshot.matches({ TOOL_EXECUTION: { askingApproval: 'waiting' } }) &&
    currentPendingApprovals(run, approvals).length > 0
  );
}

function turnSnapshotOf(run: RunSession | null): Snapshot<TurnContext> | null {
  const master = run && !run.ended ? (run.master?.getSnapshot() as Snapshot<MasterContext> | undefined) : undefined;
  const actor = master ? turnActorOf(master) : null;
  return actor ? (actor.getSnapshot() as Snapshot<TurnContext>) : null;
}
