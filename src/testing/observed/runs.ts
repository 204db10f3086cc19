import type { AgentEvent } from '../../domain/events.js';
import type { Observed, ObservedRun } from './types.js';

/** Events that mean new work began: none may follow an abort in its run. */
const WORK_EVENTS = new Set<AgentEvent['type']>([
  'beforeModelCall',
  'toolExecutionStart',
  'toolApprovalRequested',
  'retry',
  'modelFallback',
  'contextCompacted',
]);

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * An abort that lands while the run's last turn is settling (e.g. from a messageEnd or turnEnd
 * subscriber) may find the outcome already decided: it is not required to win then. An abort
 * after which a turn starts, or one the run got while it waited on the world, must end it aborted.
 */
function abortMustWin(
  events: readonly AgentEvent[],
  runId: string | null,
  abort: ObservedRun['aborts'][number],
): boolean {
  return abort.whileWaiting === true || events.slice(abort.at).some((e) => e.runId === runId && e.type === 'turnStart');
}

/**
 * After agent.abort() nothing new starts — no work event, no call into a model, tool, approval
 * handler or policy until the run ends — and (with a scheduler) the run ends before the scheduler
 * releases any other task.
 */
function checkAbortStopsWork(
  { events, momentOf, world }: Observed,
  run: ObservedRun,
  index: number,
  out: string[],
): void {
  const first = run.aborts[0];
  if (!first) return;
  const work = events.slice(first.at).find((e) => e.runId === run.runId && WORK_EVENTS.has(e.type));
  if (work)
    out.push(
      `abort: run ${index} began new work after agent.abort() (event #${first.at}): ${work.type} at seq ${work.seq}`,
    );
  if (momentOf && world) {
    const end = events.findIndex((e) => e.runId === run.runId && e.type === 'agentEnd');
    const endMoment = end === -1 ? Number.POSITIVE_INFINITY : momentOf[end]!;
    const late = world.invocations.find((call) => call.moment > first.moment && call.moment < endMoment);
    if (late)
      out.push(
        `abort: run ${index} called the ${late.what} after agent.abort() (event #${first.at}), before its agentEnd`,
      );
  }
  if (run.endedAtRelease != null && first.release !== undefined && run.endedAtRelease !== first.release) {
    out.push(
      `abort: run ${index} waited for ${run.endedAtRelease - first.release} more scheduler task(s) after agent.abort() before its agentEnd`,
    );
  }
}

/** Between a run's agentEnd and the next run's start nothing may call into the world. */
function checkQuietAfterEnd({ events, momentOf, world, runs }: Observed, out: string[]): void {
  if (!momentOf || !world) return;
  runs.forEach((run, index) => {
    const end = events.findIndex((e) => e.runId === run.runId && e.type === 'agentEnd');
    if (end === -1) return;
    const until = runs[index + 1]?.startedAt ?? Number.POSITIVE_INFINITY;
    const late = world.invocations.find((call) => call.moment > momentOf[end]! && call.moment < until);
    if (late)
      out.push(`late call: the ${late.what} was called after run ${index} ended (agentEnd seq ${events[end]!.seq})`);
  });
}

/** Every run resolved; aborts win and stop work; results are the history when the run ended. */
export function checkRuns(observed: Observed, out: string[]): void {
  checkQuietAfterEnd(observed, out);
  const { agent, events, runs, world } = observed;
  const history = agent.messages;
  runs.forEach((run, index) => {
    const result = run.result;
    if (!result) return void out.push(`hang: run ${index} never resolved its result`);
    checkAbortStopsWork(observed, run, index, out);
    const mustWin = run.aborts.find((abort) => abortMustWin(events, run.runId, abort));
    if (mustWin !== undefined && result.status !== 'aborted') {
      out.push(
        `abort: run ${index} was aborted while running (after event #${mustWin.at}) but ended ${result.status}/${result.endReason}`,
      );
    }
    if (result.status === 'aborted' && run.aborts.length === 0 && !world?.providerAborted) {
      out.push(`abort: run ${index} ended aborted though nobody aborted it`);
    }
    // A run's result is the history when it ended: later runs only append to it.
    if (!sameJson(result.messages, history.slice(0, result.messages.length))) {
      out.push(
        `history: run ${index}'s result.messages is not a prefix of the final history (something changed it after the run ended)`,
      );
    }
    if (index === runs.length - 1 && result.messages.length !== history.length) {
      out.push(`history: ${history.length - result.messages.length} message(s) committed after the last run ended`);
    }
    if (index === runs.length - 1 && !sameJson(result.counters, agent.counters)) {
      out.push(
        `counters: the agent's counters changed after the last run ended: ${JSON.stringify(result.counters)} → ${JSON.stringify(agent.counters)}`,
      );
    }
  });
  if (agent.running) out.push('hang: the agent is still running after the scenario');
}
