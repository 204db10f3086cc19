import type { SessionStore } from '../store/types.js';
import { LeaseKeeper, type LeaseOptions, type TimerClock } from './lease.js';
import { Persister, runStopOf } from './persistence.js';
import { planResume, restoreSession, runIsParked } from './resume.js';
import { launchRun } from './run-launcher.js';
import type { AgentState, RunSession } from './run-session.js';
import { SessionAccess } from './session-access.js';

export interface DurableSession {
  store: SessionStore;
  sessionId: string;
  lease?: LeaseOptions;
}

/**
 * `agent.ready`: loads the session (no lease: reading holds nothing). A run the store holds
 * unfinished is resumed at once if its owner is gone (a crashed process on this host, or its lease
 * expired); if its owner is alive, `ready` rejects with SessionBusy. A run parked at a durable
 * approval stays parked: whoever answers the approval continues it.
 */
export async function loadSession(
  state: AgentState,
  durable: DurableSession,
  onSubscriberError: (error: unknown) => void,
): Promise<RunSession | null> {
  const { store, sessionId } = durable;
  const checkpoint = await store.load(sessionId);
  // A failed write ends the run in progress (store failures are fatal, never subscriber errors).
  const onFailure = (failure: Parameters<typeof runStopOf>[0]) => state.run?.stop(runStopOf(failure));
  state.persister = new Persister(store, state, sessionId, checkpoint?.version ?? -1, onFailure);
  // A durable-execution engine runs one writer per session (Restate: one exclusive handler per key): no lease.
  if (!state.host) {
    const clock = state.options.clock as TimerClock | undefined;
    const onLeaseFailure = (error: unknown) => state.persister?.fail(error);
    const keeper = new LeaseKeeper(store, sessionId, durable.lease ?? {}, clock, onLeaseFailure);
    state.access = new SessionAccess(state, store, sessionId, keeper);
  }
  restoreSession(state, checkpoint);
  const stored = state.between?.run;
  if (!stored || runIsParked(state, stored)) return null;
  const access = state.access;
  if (!access) return launchRun(state, planResume(state, stored), onSubscriberError);
  await access.enter();
  // Reloaded under the lease: the run may have ended (or parked) meanwhile.
  const current = state.between?.run;
  if (!current || runIsParked(state, current)) {
    access.leave();
    return null;
  }
  return launchRun(state, planResume(state, current), onSubscriberError);
}
