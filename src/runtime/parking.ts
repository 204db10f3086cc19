import type { MasterContext } from '../../machines/master.types.js';
import { cloneCounters } from '../domain/counters.js';
import { AgentError } from '../domain/errors.js';
import type { SessionStore } from '../store/types.js';
import { waitsOnlyForApprovals } from './checkpoint.js';
import { realClock, type TimerClock } from './lease.js';
import type { AgentState, RunSession } from './run-session.js';

/**
 * A run that waits for a durable approval (a store, no approval handler) parks: once the step
 * recording the wait is stored, its lease is given up, so any agent — this one, another handle in
 * this process, another process — may answer. The agent that answers continues the run: this one
 * takes its lease back and goes on where it waited (if nobody moved the session on meanwhile);
 * another one resumes the run from the store and this run ends for this agent as `movedOn`.
 */
export interface Parked {
  /** The stored version when the run parked: a newer one means another agent moved the run on. */
  readonly version: number;
  stop(): void;
}

/** Parks the run if it waits for a durable approval and everything so far is stored. */
export function parkIfWaiting(run: RunSession): void {
  const state = run.agent;
  const { access, persister } = state;
  if (!access || !persister || state.host || run.ended || run.parked || run.closing || !run.master) return;
  if (!persister.approvals.durable || persister.failure) return;
  if (persister.busy) {
    void persister.settled().then(() => parkIfWaiting(run));
    return;
  }
  if (!waitsOnlyForApprovals(run, persister.approvals)) return;
  run.parked = watch(run, persister.version);
  void access.keeper.release();
}

/**
 * The parked run's own agent takes its lease back before the run goes on (an answer, a message, an
 * abort). True: the run goes on here. False: another agent moved it on (or holds it now): the run
 * ended here as `movedOn` and the session was reloaded. Embedded stores answer at once.
 */
export function unparkSync(run: RunSession): boolean {
  const access = run.agent.access;
  if (!run.parked || !access) return true;
  let version: number;
  try {
    version = access.takeLeaseSync().version;
  } catch (error) {
    if (!(error instanceof AgentError && error.code === 'SessionBusy')) throw error;
    moveOn(run);
    return false;
  }
  return resumeOrMoveOn(run, version);
}

export async function unpark(run: RunSession): Promise<boolean> {
  const access = run.agent.access;
  if (!run.parked || !access) return true;
  let version: number;
  try {
    version = (await access.takeLease()).version;
  } catch (error) {
    if (!(error instanceof AgentError && error.code === 'SessionBusy')) throw error;
    moveOn(run);
    await access.reloadNow();
    return false;
  }
  const goesOn = resumeOrMoveOn(run, version);
  if (!goesOn) await access.reloadNow();
  return goesOn;
}

function resumeOrMoveOn(run: RunSession, version: number): boolean {
  const parked = run.parked;
  const access = run.agent.access;
  if (!parked || !access) return true;
  if (version === parked.version && !run.ended) {
    parked.stop();
    run.parked = null;
    access.keeper.startRenewing();
    return true;
  }
  // Moved on by another agent: the lease just taken covered nothing of this run.
  access.leave();
  moveOn(run);
  return false;
}

/**
 * The run continues elsewhere: it ends for this agent without an event (its log goes on in the
 * store under the agent that took it over) and its result says `movedOn`. With an embedded store
 * the session is reloaded at once.
 */
export function moveOn(run: RunSession): void {
  const state = run.agent;
  if (run.ended) return;
  run.parked?.stop();
  run.parked = null;
  run.ended = true;
  run.closing = true;
  const master = run.master?.getSnapshot() as { context: MasterContext } | undefined;
  const context = master?.context;
  state.between = {
    steeringQueue: [...(context?.steeringQueue ?? [])],
    followUpQueue: [...(context?.followUpQueue ?? [])],
    turnIndex: context?.turnIndex ?? state.between?.turnIndex ?? 0,
    run: null,
  };
  if (state.run === run) state.run = null;
  run.controller.abort('the run moved on to another agent');
  run.master?.stop();
  // Messages this agent queued are stored with the run: the agent that continues it delivers them.
  for (const message of [...state.between.steeringQueue, ...state.between.followUpQueue]) {
    state.receipts.get(message)?.({ status: 'stillQueued' });
    state.receipts.delete(message);
  }
  run.ledger.close();
  run.moveOn({
    status: 'movedOn',
    endReason: 'movedOn',
    messages: state.history.slice(),
    counters: cloneCounters(state.counters),
  });
  // A failed reload is no loss: the next run compares versions and reloads before it starts.
  if (state.access?.store.loadSync) state.access.reloadNow().catch(() => {});
}

/** Parked runs of this process by store and session: a write by another agent moves them on at once. */
const parkedHere = new WeakMap<SessionStore, Map<string, Set<RunSession>>>();

/** Another agent of this process stored a step of the session: a parked run of it moved on. */
export function sessionWritten(store: SessionStore, sessionId: string, writer: AgentState, version: number): void {
  const runs = parkedHere.get(store)?.get(sessionId);
  if (!runs) return;
  for (const run of [...runs]) if (run.agent !== writer && run.parked && version > run.parked.version) moveOn(run);
}

/**
 * Watches the stored version while parked: another process that answers moves it on. Polled every
 * third of the lease's ttl on the agent's clock (a timer that never keeps the process alive).
 */
function watch(run: RunSession, version: number): Parked {
  const state = run.agent;
  const store = state.access?.store as SessionStore;
  const sessionId = state.sessionKey;
  const clock = (state.options.clock as TimerClock | undefined) ?? realClock;
  const interval = Math.max(1, Math.floor((state.access?.keeper.ttlMs ?? 30_000) / 3));
  const byStore = parkedHere.get(store) ?? new Map<string, Set<RunSession>>();
  parkedHere.set(store, byStore);
  const runs = byStore.get(sessionId) ?? new Set<RunSession>();
  byStore.set(sessionId, runs);
  runs.add(run);
  let timer: unknown = null;
  let stopped = false;
  const check = async () => {
    timer = null;
    try {
      const stored = store.versionOf
        ? await store.versionOf(sessionId)
        : ((await store.load(sessionId))?.version ?? -1);
      if (stopped) return;
      if (stored !== version) return moveOn(run);
    } catch {
      // The store is unreachable for now: the next check (or the run's own next step) tells.
    }
    if (!stopped) timer = clock.setTimeout(() => void check(), interval);
  };
  timer = clock.setTimeout(() => void check(), interval);
  return {
    version,
    stop() {
      stopped = true;
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
      runs.delete(run);
    },
  };
}
