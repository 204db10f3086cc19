import { cloneCounters } from '../domain/counters.js';
import { AgentError } from '../domain/errors.js';
import type { RunCheckpoint } from '../store/types.js';
import { launchRun, prepareRun, startRun } from './run-launcher.js';
import { planResume, runIsParked, type RunStart } from './resume.js';
import type { AgentState, RunSession } from './run-session.js';

export interface StartPlan {
  /** The run on the session as it is once the lease is taken (throws to refuse it). */
  plan: () => RunStart;
  /** The prepared run's id (a server store): the stored run's when it continues one. */
  runId?: string;
  /** The run continues the one the stored session holds (a parked run taken over). */
  continuesStoredRun?: boolean;
  /** What the run gets once its master started (an approval's answer, a steering message). */
  afterStart?: (run: RunSession) => void;
}

/**
 * Starts a run under the session's lease (an agent with a store): the lease is taken and the
 * session reloaded if another agent advanced it, then `plan` decides the run on the session as it
 * is now. With an embedded store this happens inside the call, and a refusal (SessionBusy, what
 * `plan` throws) is thrown. With a server store the run is handed back at once and starts when the
 * lease is taken; a refusal then rejects its `result` with the same AgentError.
 */
export function beginRun(state: AgentState, onSubscriberError: (error: unknown) => void, start: StartPlan): RunSession {
  const { plan, afterStart = () => {} } = start;
  const refusalOf = () => (start.continuesStoredRun ? null : sessionRunRefusal(state, onSubscriberError));
  const access = state.access;
  if (!access) {
    const run = launchRun(state, plan(), onSubscriberError);
    afterStart(run);
    return run;
  }
  if (access.sync) {
    access.enterSync();
    try {
      const refusal = refusalOf();
      if (refusal) throw refusal;
      const run = launchRun(state, plan(), onSubscriberError);
      afterStart(run);
      return run;
    } catch (error) {
      if (!state.run) access.leave();
      throw error;
    }
  }
  const run = prepareRun(state, onSubscriberError, start.runId);
  const refuse = (error: unknown) => {
    if (!state.run || state.run === run) access.leave();
    run.refuse(error);
  };
  access.enter().then(() => {
    // Aborted (or the agent closed) while the lease was on its way: it settled already.
    if (state.run !== run || run.signal.aborted) {
      if (!state.run || state.run === run) access.leave();
      return;
    }
    try {
      state.run = null;
      const refusal = refusalOf();
      if (refusal) return refuse(refusal);
      state.run = run;
      startRun(state, run, plan());
      afterStart(run);
    } catch (error) {
      if (state.run === run) state.run = null;
      refuse(error);
    }
  }, refuse);
  return run;
}

/**
 * A run that has not started settles as aborted at once (abort reaches every wait, the lease's too):
 * nothing was written, no event published.
 */
export function abortUnstarted(state: AgentState, run: RunSession, reason: string): void {
  run.controller.abort(reason);
  run.settleUnstarted({
    status: 'aborted',
    endReason: 'aborted',
    messages: state.history.slice(),
    counters: cloneCounters(state.counters),
    error: { code: 'aborted', message: reason },
  });
}

/**
 * The stored session holds a run of its own (found when the session was reloaded under the lease):
 * a new run may not start beside it. A parked run waits for its approval's answer; a run a crash
 * interrupted is resumed here at once (the lease is this agent's now).
 */
function sessionRunRefusal(state: AgentState, onSubscriberError: (error: unknown) => void): AgentError | null {
  const stored = state.between?.run;
  if (!stored) return null;
  if (runIsParked(state, stored)) return parkedRunRefusal(stored);
  launchRun(state, planResume(state, stored), onSubscriberError);
  return new AgentError(
    'AlreadyRunning',
    `run ${stored.runId}, which a crash interrupted, was resumed first (agent.currentRun): start the next run when it ends.`,
  );
}

export function parkedRunRefusal(stored: RunCheckpoint): AgentError {
  const pending = stored.turn?.pendingApprovals ?? [];
  const calls = pending.map((approval) => `"${approval.toolCallId}" (version ${approval.version})`).join(', ');
  const which = calls ? ` for tool call${pending.length > 1 ? 's' : ''} ${calls}` : '';
  const them = pending.length > 1 ? 'each' : 'it';
  return new AgentError(
    'AlreadyRunning',
    `run ${stored.runId} waits for an approval${which}: answer ${them} with resolveApproval(), or abort() the run.`,
  );
}
