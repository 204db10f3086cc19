import { createActor, type InspectionEvent } from 'xstate';
import type { MasterInput, MasterOutput } from '../../machines/master.types.js';
import type { TurnFeatures } from '../../machines/turn.types.js';
import { cloneCounters } from '../domain/counters.js';
import { AgentError, modelError, type RunErrorCode } from '../domain/errors.js';
import type { Message } from '../domain/messages.js';
import type { RunResult } from '../domain/outcomes.js';
import type { ToolExecution } from '../tools/strategy.js';
import { cancelCutQuestions } from './elicitation.js';
import { closeAfterInternalError } from './internal-error.js';
import { isolatedInspector } from './isolation.js';
import { endOf, masterLogic } from './master-effects.js';
import { errorMessage } from './policy-runner.js';
import { finalReportOf } from './report.js';
import { runStopOf } from './persistence.js';
import { takeBetween, type RunStart } from './resume.js';
import { bindRun } from './run-registry.js';
import { RunSession, type AgentState } from './run-session.js';

/** Starts a run of the agent's master machine: a fresh one (START) or one resumed after a restart (RESUME). */
export function launchRun(state: AgentState, start: RunStart, onSubscriberError: (error: unknown) => void): RunSession {
  const run = prepareRun(state, onSubscriberError, start.kind === 'resumed' ? start.runId : undefined);
  try {
    startRun(state, run, start);
  } catch (error) {
    state.run = null;
    throw error;
  }
  return run;
}

/**
 * A run as its caller gets it before it starts: its id, its event log and its result. With a
 * server store the run starts once the session's lease is taken (`startRun`), or is refused
 * (`refuseRun`); meanwhile the agent counts as running.
 */
export function prepareRun(state: AgentState, onSubscriberError: (error: unknown) => void, runId?: string): RunSession {
  const run = new RunSession(state, onSubscriberError, runId !== undefined ? { runId, nextSeq: 0 } : undefined);
  let resolveResult: (result: RunResult) => void = () => {};
  let rejectResult: (error: unknown) => void = () => {};
  const result = new Promise<RunResult>((resolve, reject) => ((resolveResult = resolve), (rejectResult = reject)));
  // A refusal nobody awaits must not become an unhandled rejection (the run's events still end).
  result.catch(() => {});
  run.finish = (end) => finishRun(state, run, end, resolveResult);
  run.refuse = (error) => {
    if (state.run === run) state.run = null;
    run.log.close();
    rejectResult(error);
    run.launched.resolve();
  };
  run.settleUnstarted = (value) => {
    if (state.run === run) state.run = null;
    run.log.close();
    resolveResult(value);
    run.launched.resolve();
  };
  run.moveOn = (value) => {
    run.closeEvents();
    resolveResult(value);
  };
  run.handle = { result, events: run.log.observable() };
  state.run = run;
  return run;
}

/** Starts the prepared run's master: what `start` says, with the queues and turn index the session holds now. */
export function startRun(state: AgentState, run: RunSession, start: RunStart): void {
  // Read before the run takes the session's state: a hostile tool or options getter throwing here
  // must not leave the agent marked as running (every later call would answer AlreadyRunning).
  let input: MasterInput;
  try {
    input = masterInput(state, start);
  } catch (error) {
    const detail = errorMessage(error);
    const why = `reading the agent's options or tools threw: ${detail}`;
    throw new AgentError('InvalidOptions', `the run could not start: ${why}`);
  }
  takeBetween(state);
  const onSubscriberError = run.reportSubscriberError;
  if (start.kind === 'resumed') {
    run.continueAt(start.nextSeq);
    if (start.at.at === 'turn') run.ledger.markStarted(start.at.turn.startedCallIds);
    if (state.persister) state.persister.approvals.pending = start.pendingApprovals;
    if (start.cutQuestions) cancelCutQuestions(run, start.cutQuestions.turnIndex, start.cutQuestions.calls);
  }
  const userInspect = isolatedInspector(state.options.inspect, onSubscriberError);
  const persister = state.persister;
  // A step is written after each actor step that changed something: the checkpoint then reads
  // the machines' state as that step left it. Not after an actor's start: XState starts the
  // children of a machine's first state before that state's actions run (its parent's step,
  // which follows, is written).
  const inspect =
    persister || userInspect
      ? (event: InspectionEvent) => {
          userInspect?.(event);
          if (
            persister &&
            event.type === '@xstate.snapshot' &&
            event.event.type !== 'xstate.init' &&
            run.actionDepth === 0
          ) {
            persister.flushStep();
          }
        }
      : null;
  const master = createActor(masterLogic(), {
    input,
    // An explicit `clock: undefined` would replace XState's default clock.
    ...(state.options.clock ? { clock: state.options.clock } : {}),
    ...(inspect ? { inspect } : {}),
  });
  run.master = master;
  bindRun(master.system, run);
  state.access?.keeper.startRenewing();
  // A throw inside a master action must never leave a run without agentEnd or a result, nor lose
  // its log: the turn is closed as after any internal error, then the run ends as a fatal error.
  master.subscribe({
    error: (error) => {
      if (run.ended) return;
      // The master takes nothing more: steering from a subscriber of the closing events queues between runs.
      run.closing = true;
      const snapshot = master.getSnapshot();
      try {
        closeAfterInternalError(run, snapshot, error);
      } finally {
        const failure = modelError('internal', `internal error: ${errorMessage(error)}`);
        const end = endOf(snapshot.context);
        // A STOP already decided the end; otherwise the run ends as an internal error.
        run.finish(end.by === 'runtime' ? end : { ...end, status: 'failed', endReason: 'fatalError', error: failure });
      }
    },
  });
  master.start();
  master.send({ type: start.kind === 'fresh' ? 'START' : 'RESUME' });
  run.launched.resolve();
}

function masterInput(state: AgentState, start: RunStart): MasterInput {
  const between = state.between ?? { steeringQueue: [], followUpQueue: [], turnIndex: 0 };
  const drained = start.kind === 'fresh' && start.drainsQueues === true;
  const { options, resolved, registry } = state;
  const policies = options.policies ?? {};
  return {
    config: {
      steeringMode: resolved.steeringMode,
      followUpMode: resolved.followUpMode,
      maxTurns: resolved.maxTurns,
      maxAttempts: resolved.retry.maxAttempts,
      modelCount: resolved.models.length,
      reportToolName: options.finalReport?.toolName ?? null,
      progressToolNames: registry.tools.filter((tool) => tool.progress).map((tool) => tool.name),
      postLoopPolicies: (policies.postLoop?.length ?? 0) > 0,
      turnFeatures: turnFeatures(state),
    },
    newMessages: start.kind === 'fresh' ? start.newMessages : start.pending,
    steeringQueue: drained ? [] : between.steeringQueue,
    followUpQueue: drained ? [] : between.followUpQueue,
    turnIndex: between.turnIndex,
    resume: start.kind === 'resumed' ? start.at : null,
    ...(start.kind === 'resumed'
      ? {
          turnsThisRun: start.turnsThisRun,
          modelIndex: start.modelIndex,
          modelCalls: start.modelCalls,
          attemptsOnModel: start.attemptsOnModel,
        }
      : {}),
  };
}

function turnFeatures(state: AgentState): TurnFeatures {
  const { options, resolved } = state;
  const policies = options.policies ?? {};
  return {
    preTurnPolicies: (policies.preTurn?.length ?? 0) > 0,
    preDispatchPolicies: (policies.preDispatch?.length ?? 0) > 0,
    postTurnPolicies: (policies.postTurn?.length ?? 0) > 0,
    steeringInterrupts: resolved.steeringInterrupts,
    steeringGraceMs: resolved.steeringGraceMs,
    execution: executionOf(resolved.toolExecution),
  };
}

function executionOf(execution: ToolExecution): TurnFeatures['execution'] {
  if (execution === 'parallel') return { kind: 'parallel' };
  if (execution === 'sequential') return { kind: 'sequential' };
  if ('concurrency' in execution) return { kind: 'pool', limit: execution.concurrency };
  return { kind: 'custom' };
}

function finishRun(
  state: AgentState,
  run: RunSession,
  end: MasterOutput,
  resolveResult: (result: RunResult) => void,
): void {
  if (run.ended) return;
  run.parked?.stop();
  run.parked = null;
  // From here steer()/followUp() queue between runs: the master takes nothing more.
  run.closing = true;
  state.between = {
    steeringQueue: [...end.steeringQueue],
    followUpQueue: [...end.followUpQueue],
    turnIndex: end.turnIndex,
    run: null,
  };
  const error = endError(run, end);
  // The runtime's own failures (a model's are counted at its attempt) are counted by code too (failureCodes).
  if (end.by === 'runtime') run.ledger.recordFailure(end.error.code);
  else if (error?.code === 'internal') run.ledger.recordFailure('internal');
  const counters = cloneCounters(state.counters);
  const { status, endReason } = end;
  // The history at the end, as a view: a session of many runs does not store a copy per run.
  const view = state.log.view();
  const messages = view.messages() as Message[];
  run.emit({ type: 'agentEnd', status, endReason, messages, counters, ...(error ? { error } : {}) }, view);
  run.ended = true;
  // User code still running (a tool that ignored its cancellation, a stalled stream) learns the run is over.
  if (!run.signal.aborted) run.controller.abort('the run ended');
  run.ledger.close();
  for (const message of [...end.steeringQueue, ...end.followUpQueue]) {
    state.receipts.get(message)?.({ status: 'stillQueued' });
    state.receipts.delete(message);
  }
  state.run = null;
  state.persister?.step();
  // The lease goes once the last step has landed: an agent with no run holds nothing.
  state.access?.leave();
  run.closeEvents();
  const report = finalReportOf(state, endReason);
  const result: RunResult = {
    status,
    endReason,
    messages: state.history.slice(),
    counters,
    ...(report ? { finalReport: report } : {}),
    ...(error ? { error } : {}),
  };
  // The run ends when its last step is written; if that write fails, the result says so.
  const persister = state.persister;
  const written = (): RunResult => {
    const failure = end.by === 'chart' && persister?.failure ? persister.failure : null;
    if (!failure) return result;
    const stop = runStopOf(failure as AgentError);
    // After agentEnd (the ledger is closed): the agent's counters and the result's count it.
    const codes = state.counters.failureCodes;
    codes[stop.code] = (codes[stop.code] ?? 0) + 1;
    return {
      ...result,
      counters: cloneCounters(state.counters),
      status: 'failed',
      endReason: 'fatalError',
      error: stop,
    };
  };
  // An aborted run settles within a macrotask (abort reaches every await); flush() is then the wait on its last step.
  if (!persister?.busy || status === 'aborted') return resolveResult(written());
  let settled = false;
  const settle = (final: RunResult) => {
    if (settled) return;
    settled = true;
    state.cutFinalWrite = null;
    resolveResult(final);
  };
  // abort() while the store still writes the last step stops waiting for it (flush() still waits).
  state.cutFinalWrite = () => settle(result);
  void persister.settled().then(() => settle(written()));
}

/** A failed run's error (the runtime's stop: a store failure, a lost lease; or the model's); an aborted run's reason. */
function endError(run: RunSession, end: MasterOutput): { code: RunErrorCode; message: string } | null {
  if (end.by === 'runtime') return { code: end.error.code, message: end.error.message };
  if (end.status === 'aborted') return { code: 'aborted', message: run.abortReason };
  if (end.status === 'failed' && end.error) return { code: end.error.kind, message: end.error.message };
  return null;
}
