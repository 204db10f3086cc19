import { createActor } from 'xstate';
import type { MasterContext, MasterInput, MasterResume } from '../../machines/master.types.js';
import { cloneCounters } from '../domain/counters.js';
import type { Message } from '../domain/messages.js';
import type { TurnCheckpoint } from '../store/types.js';
import type { RunResult } from '../domain/outcomes.js';
import { masterLogic } from './master-effects.js';
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

  const master = createActor(masterLogic(), {
    input: masterInput(state, start),
    // An explicit `clock: undefined` would replace XState's default clock.
    ...(state.options.clock ? { clock: state.options.clock } : {}),
    ...(state.options.inspect ? { inspect: state.options.inspect } : {}),
  });
  run.master = master;
  run.handle = { result, events: run.log.observable() };
  bindRun(master.system, run);
  state.lease?.runStarted();
  // A bug must never leave a run without agentEnd or a result: end it as a fatal error.
  master.subscribe({
    error: (error) => {
      run.finish({
        ...master.getSnapshot().context,
        status: 'failed',
        endReason: 'fatalError',
        error: { kind: 'unknown', message: `internal error: ${errorMessage(error)}`, retryable: false },
      });
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

function finishRun(state: AgentState, run: RunSession, ended: EndContext, resolveResult: (result: RunResult) => void): void {
  if (run.ended) return;
  // A run the runtime stopped (store failure, lost lease) ends failed, whatever the chart decided.
  const context: EndContext = run.stopped ? { ...ended, status: 'failed', endReason: 'fatalError', error: null } : ended;
  run.closing = true;
  run.closeTurnAsAborted();
  // Messages the master never took (sent while it was already ending) stay queued, never lost.
  const untaken = [...state.unacknowledged];
  state.unacknowledged.clear();
  state.steeringQueue = [...context.steeringQueue, ...untaken.filter(([, source]) => source === 'steering').map(([message]) => message)];
  state.followUpQueue = [...context.followUpQueue, ...untaken.filter(([, source]) => source === 'followUp').map(([message]) => message)];
  state.turnIndex = context.turnIndex;
  const counters = cloneCounters(state.counters);
  // The history at the end, as a view: a session of many runs does not store a copy per run.
  const view = state.log.view();
  run.emit({ type: 'agentEnd', status: context.status, endReason: context.endReason, messages: view.messages() as Message[], counters }, view);
  run.ended = true;
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
  const error = run.stopped ?? (context.error && context.status === 'failed' ? { code: context.error.kind, message: context.error.message } : null);
  const result: RunResult = {
    status: context.status,
    endReason: context.endReason,
    messages: state.history.slice(),
    counters,
    ...(report ? { finalReport: report } : {}),
    ...(error ? { error: { code: error.code, message: error.message } } : {}),
  };
  // The run ends when its last step is written; if that write fails, the result says so.
  const persister = state.persister;
  if (!persister) return resolveResult(result);
  void persister.settled().then(() => {
    const failure = !run.stopped && persister.failure ? persister.failure : null;
    resolveResult(failure ? { ...result, status: 'failed', endReason: 'fatalError', error: { code: failure.code === 'SessionLost' ? 'sessionLost' : 'storeFailed', message: failure.message } } : result);
  });
}
