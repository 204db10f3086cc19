import type { Message } from '../domain/messages.js';
import type { RunCheckpoint } from '../store/types.js';
import { unpark, unparkSync } from './parking.js';
import { planResume } from './resume.js';
import type { AgentState, BetweenRuns, MessageSource, RunSession, SteerReceipt } from './run-session.js';
import { beginRun } from './run-start.js';

/**
 * Hands a steering or follow-up message to whoever holds the session's queues now: the run in
 * progress (its master takes it: delivered in a turn, or still queued when the run ends), or the
 * session between runs, where it is stored before the receipt says `stillQueued`. A run the stored
 * session holds (parked at an approval, or interrupted by a crash) is continued with it.
 */
export function deliver(
  state: AgentState,
  message: Message,
  source: MessageSource,
  onSubscriberError: (error: unknown) => void,
): Promise<SteerReceipt> {
  state.sources.set(message, source);
  const run = state.run;
  if (run && !run.closing) {
    // A run waiting for its lease (a server store): the message goes to it once it has started.
    if (!run.master) return run.launched.promise.then(() => deliver(state, message, source, onSubscriberError));
    // Parked at an approval: the run takes its lease back first (another agent may have moved it on).
    if (run.parked) {
      const goOn = (goesOn: boolean) =>
        goesOn ? sendToRun(state, run, message, source) : deliver(state, message, source, onSubscriberError);
      if (!state.access?.sync) return unpark(run).then(goOn);
      try {
        return goOn(unparkSync(run));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return sendToRun(state, run, message, source);
  }
  return queueBetweenRuns(state, message, source, onSubscriberError);
}

function sendToRun(state: AgentState, run: RunSession, message: Message, source: MessageSource): Promise<SteerReceipt> {
  const receipt = new Promise<SteerReceipt>((resolve) => state.receipts.set(message, resolve));
  // Accepted means persisted: the master's step that takes it writes a step (a crash keeps it).
  run.master?.send({ type: source === 'steering' ? 'STEER' : 'FOLLOW_UP', message });
  return receipt;
}

/** Between runs: queued in the session (under its lease, after a reload if another agent advanced it) and stored. */
function queueBetweenRuns(
  state: AgentState,
  message: Message,
  source: MessageSource,
  onSubscriberError: (error: unknown) => void,
): Promise<SteerReceipt> {
  const access = state.access;
  const queue = (): Promise<SteerReceipt> => {
    if (access && state.between?.run) return continueStoredRun(state, message, source, onSubscriberError);
    const between = state.between as BetweenRuns;
    (source === 'steering' ? between.steeringQueue : between.followUpQueue).push(message);
    const persister = state.persister;
    persister?.step();
    access?.leave();
    if (!persister) return Promise.resolve({ status: 'stillQueued' });
    // The receipt says queued only once the queue is stored; a failed write refuses the message.
    return persister.flushed().then(() => ({ status: 'stillQueued' }) as const);
  };
  if (!access) return queue();
  if (access.sync) {
    try {
      access.enterSync();
    } catch (error) {
      return Promise.reject(error);
    }
    return queue();
  }
  return access.enter().then(() => {
    // A run started on this agent while the lease was on its way: it takes the message.
    if (state.run && !state.run.closing) {
      access.leave();
      return deliver(state, message, source, onSubscriberError);
    }
    return queue();
  });
}

/**
 * The stored session's own run (parked at an approval, or interrupted by a crash) continues here
 * with the message (the lease is this agent's already): steering withdraws a parked approval as it
 * would in the run that parked, a follow-up waits in the run's queue.
 */
function continueStoredRun(
  state: AgentState,
  message: Message,
  source: MessageSource,
  onSubscriberError: (error: unknown) => void,
): Promise<SteerReceipt> {
  const stored = state.between?.run as RunCheckpoint;
  return new Promise<SteerReceipt>((resolve, reject) => {
    const run = beginRun(state, onSubscriberError, {
      plan: () => planResume(state, stored),
      runId: stored.runId,
      continuesStoredRun: true,
      afterStart: (started) => resolve(sendToRun(state, started, message, source)),
    });
    run.handle?.result.catch(reject);
  });
}
