import { createActor } from 'xstate';
import type { MasterContext, MasterInput, MasterResume } from '../../machines/master.types.js';
import { cloneCounters } from '../domain/counters.js';
import { AgentError, modelError } from '../domain/errors.js';
import type { Message } from '../domain/messages.js';
import type { TurnCheckpoint } from '../store/types.js';
import type { RunResult } from '../domain/outcomes.js';
import { isolatedInspector } from './isolation.js';
import { masterLogic } from './master-effects.js';
import { runStopOf } from './persistence.js';
import { errorMessage } from './policy-runner.js';
import { finalReportOf } from './report.js';
import { closeCommittedTurn } from './resume.js';
import { bindRun } from './run-registry.js';
import { RunSession, type AgentState, type TurnScope } from './run-session.js';

export type RunStart =
  | { kind: 'fresh'; newMessages: Message[] }
  | {
      kind: 'resumed';
      runId: string;
      nextSeq: number;
      pending: Message[];
      turnsThisRun: number;
      modelIndex: number;
      at: MasterResume;
      turn: TurnScope | null;
      /** A committed turn that only lacks its turnEnd: published before the run moves on. */
      closeTurn: TurnCheckpoint | null;
    };

type EndContext = Pick<MasterContext, 'status' | 'endReason' | 'error' | 'steeringQueue' | 'followUpQueue' | 'turnIndex'>;

/** Starts a run of the agent's master machine: a fresh one (START) or one resumed after a restart (RESUME). */
export function launchRun(state: AgentState, start: RunStart, onSubscriberError: (error: unknown) => void): RunSession {
  // Read before the run exists: a hostile tool or options getter throwing here must not leave the
  // agent marked as running (every later call would answer AlreadyRunning).
  let input: MasterInput;
  try {
    input = masterInput(state, start);
  } catch (error) {
    const detail = errorMessage(error);
    const why = `reading the agent's options or tools threw: ${detail}`;
    throw new AgentError('InvalidOptions', `the run could not start: ${why}`);
  }
  const run = new RunSession(state, onSubscriberError, start.kind === 'resumed' ? { runId: start.runId, nextSeq: start.nextSeq } : undefined);
  state.run = run;
  if (start.kind === 'resumed') {
    run.modelIndex = start.modelIndex;
    if (start.turn) {
      run.turn = start.turn;
      run.ledger.markStarted(start.turn.started);
    }
  }
  let resolveResult: (result: RunResult) => void = () => {};
  const result = new Promise<RunResult>((resolve) => (resolveResult = resolve));
  run.finish = (context: EndContext) => finishRun(state, run, context, resolveResult);

  const inspect = isolatedInspector(state.options.inspect, onSubscriberError);
  const master = createActor(masterLogic(), {
    input,
    // An explicit `clock: undefined` would replace XState's default clock.
    ...(state.options.clock ? { clock: state.options.clock } : {}),
    ...(inspect ? { inspect } : {}),
  });
  run.master = master;
  run.handle = { result, events: run.log.observable() };
  bindRun(master.system, run);
  state.lease?.runStarted();
  // A throw inside a master action must never leave a run without agentEnd or a result, nor lose
  // its log: the turn is closed as after any internal error, then the run ends as a fatal error.
  master.subscribe({
    error: (error) => {
      if (run.ended) return;
      const context = master.getSnapshot().context as MasterContext;
      const detail = errorMessage(error);
      try {
        run.closeAfterInternalError([...context.turnInput, ...context.pending], detail);
      } finally {
        const error = modelError('internal', `internal error: ${detail}`);
        run.finish({ ...context, status: 'failed', endReason: 'fatalError', error });
      }
    },
  });
  if (start.kind === 'resumed' && start.closeTurn) closeCommittedTurn(run, start.closeTurn);
  master.start();
  master.send({ type: start.kind === 'fresh' ? 'START' : 'RESUME' });
  return run;
}

function masterInput(state: AgentState, start: RunStart): MasterInput {
  const { options, resolved, registry } = state;
  const policies = options.policies ?? {};
  return {
    newMessages: start.kind === 'fresh' ? start.newMessages : start.pending,
    steeringQueue: state.steeringQueue,
    followUpQueue: state.followUpQueue,
    steeringMode: resolved.steeringMode,
    followUpMode: resolved.followUpMode,
    turnIndex: state.turnIndex,
    maxTurns: resolved.maxTurns,
    maxAttempts: resolved.retry.maxAttempts,
    modelCount: resolved.models.length,
    reportToolName: options.finalReport?.toolName ?? null,
    progressToolNames: registry.tools.filter((tool) => tool.progress).map((tool) => tool.name),
    postLoopPolicies: (policies.postLoop?.length ?? 0) > 0,
    turnFeatures: {
      preTurnPolicies: (policies.preTurn?.length ?? 0) > 0,
      preDispatchPolicies: (policies.preDispatch?.length ?? 0) > 0,
      postTurnPolicies: (policies.postTurn?.length ?? 0) > 0,
      steeringInterrupts: resolved.steeringInterrupts,
      steeringGraceMs: resolved.steeringGraceMs,
      fixedPartition: typeof resolved.toolExecution === 'string' || 'concurrency' in resolved.toolExecution,
    },
    resume: start.kind === 'resumed' ? start.at : null,
    ...(start.kind === 'resumed' ? { turnsThisRun: start.turnsThisRun, modelIndex: start.modelIndex } : {}),
  };
}

function finishRun(
  state: AgentState,
  run: RunSession,
  ended: EndContext,
  resolveResult: (result: RunResult) => void,
): void {
  if (run.ended) return;
  // A run the runtime stopped (store failure, lost lease) ends failed, whatever the chart decided.
  const context: EndContext = run.stopped
    ? { ...ended, status: 'failed', endReason: 'fatalError', error: null }
    : ended;
  run.closing = true;
  run.closeTurnAsAborted();
  // Messages the master never took (sent while it was already ending) stay queued, never lost.
  const untaken = [...state.unacknowledged];
  state.unacknowledged.clear();
  state.steeringQueue = [...context.steeringQueue, ...untaken.filter(([, source]) => source === 'steering').map(([message]) => message)];
  state.followUpQueue = [...context.followUpQueue, ...untaken.filter(([, source]) => source === 'followUp').map(([message]) => message)];
  state.turnIndex = context.turnIndex;
  const counters = cloneCounters(state.counters);
  const error = endError(run, context);
  const { status, endReason } = context;
  // The history at the end, as a view: a session of many runs does not store a copy per run.
  const view = state.log.view();
  const messages = view.messages() as Message[];
  run.emit({ type: 'agentEnd', status, endReason, messages, counters, ...(error ? { error } : {}) }, view);
  run.ended = true;
  // User code still running (a tool that ignored its cancellation, a stalled stream) learns the run is over.
  if (!run.signal.aborted) run.controller.abort('the run ended');
  run.ledger.close();
  for (const message of [...state.steeringQueue, ...state.followUpQueue]) {
    state.receipts.get(message)?.({ status: 'stillQueued' });
    state.receipts.delete(message);
  }
  state.run = null;
  state.lease?.runEnded();
  state.persister?.step(state, null);
  run.log.close();
  const report = finalReportOf(state, context.endReason);
  const result: RunResult = {
    status: context.status,
    endReason: context.endReason,
    messages: state.history.slice(),
    counters,
    ...(report ? { finalReport: report } : {}),
    ...(error ? { error } : {}),
  };
  // The run ends when its last step is written; if that write fails, the result says so.
  const persister = state.persister;
  const written = (): RunResult => {
    const failure = !run.stopped && persister?.failure ? persister.failure : null;
    if (!failure) return result;
    return { ...result, status: 'failed', endReason: 'fatalError', error: runStopOf(failure) };
  };
  // An aborted run settles at once (§9); flush() is then the wait on its last step.
  if (!persister?.busy || context.status === 'aborted') return resolveResult(written());
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

/** A failed run's error (the runtime's stop first: a store failure, a lost lease); an aborted run's reason. */
function endError(run: RunSession, context: EndContext): { code: string; message: string } | null {
  if (run.stopped) return { code: run.stopped.code, message: run.stopped.message };
  if (context.status === 'aborted') return { code: 'aborted', message: run.abortReason };
  if (context.status === 'failed' && context.error) return { code: context.error.kind, message: context.error.message };
  return null;
}
