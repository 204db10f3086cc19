import { drive, type TaskScheduler } from '../../src/testing/race/scheduler.js';
import {
  AgentError,
  createAgent,
  type AgentEvent,
  type AgentOptions,
  type RunResult,
  type SteerReceipt,
} from 'agentchart';
import { checkScenario, type CheckInput, type RunRecord, type SentMessage } from './checks.js';
import type { Action, Scenario } from './spec.js';
import { worldPolicies } from './policies.js';
import {
  gateOn,
  NEVER_MS,
  TrackedClock,
  worldApproval,
  worldModels,
  worldTools,
  type Gate,
  type WorldRecord,
} from './world.js';

export { scenarioArbitrary, FULL_FOCUS, type Focus, type Scenario } from './spec.js';

/**
 * The interleaving driver: builds an agent over the scheduler-gated world, starts the run(s),
 * fires the scenario's actions as scheduler tasks, then lets the scheduler release every task in
 * the order it picks. When nothing is scheduled and a run is still going it advances the
 * SimulatedClock to the next timer (backoff, steering grace), aborts a stalled stream (only an
 * abort ends one), or reports a hang.
 */

export interface ScenarioReport {
  violations: string[];
  /** What the driver did, in order: actions fired, runs started and ended, clock moves. */
  trace: string[];
  events: AgentEvent[];
  results: Array<RunResult | null>;
  /** What the checks looked at (tests of the checks re-run them on altered copies). */
  checked: CheckInput;
}

/** More scheduler tasks than any finite scenario needs: beyond it the run is a runaway. */
const MAX_TASKS = 3_000;

export async function runScenario(scenario: Scenario, scheduler: TaskScheduler): Promise<ScenarioReport> {
  const trace: string[] = [];
  const violations: string[] = [];
  const events: AgentEvent[] = [];
  // One counter orders events, aborts and calls into the world.
  let moment = 0;
  const momentOf: number[] = [];
  const record: WorldRecord = {
    requests: [],
    executions: [],
    approvalCalls: [],
    stalledStreams: 0,
    providerAborted: false,
    invocations: [],
    stamp: () => ++moment,
  };
  let tasks = 0;
  let releases = 0;
  let runaway = false;
  const schedulerGate = gateOn(scheduler, () => releases++);
  // Past the bound a gate never opens: the runaway stops growing and is reported.
  const gate: Gate = (label, signal) => {
    if (++tasks > MAX_TASKS) {
      runaway = true;
      return new Promise<void>(() => {});
    }
    return schedulerGate(label, signal);
  };
  const clock = new TrackedClock();
  // Time passes alongside everything else: each timer's deadline is reached at a step the scheduler picks.
  clock.onTimer = (id, deadline) => {
    void gate(`clock reaches ${deadline} ms (timer ${id})`).then(() => {
      if (clock.isPending(id)) clock.set(Math.max(deadline, clock.now()));
    });
  };
  const { config } = scenario;
  const models = worldModels(config.fallback ? ['primary', 'fallback'] : ['primary'], scenario.replies, gate, record);
  const options: AgentOptions = {
    model: models[0]!,
    fallbackModels: models.slice(1),
    tools: worldTools(gate, record),
    approval: worldApproval(scenario.approvals, gate, record),
    approvalMode: config.approvalMode,
    policies: worldPolicies(scenario.policies, gate, record),
    toolExecution: config.toolExecution === 'concurrency2' ? { concurrency: 2 } : config.toolExecution,
    steeringMode: config.steeringMode,
    followUpMode: config.followUpMode,
    steeringInterrupts: config.steeringInterrupts,
    streaming: config.liveStreaming ? 'live' : 'buffered',
    steeringGraceMs: config.steeringGraceMs,
    retry: {
      maxAttempts: config.maxAttempts,
      baseDelayMs: config.baseDelayMs,
      maxDelayMs: 30_000,
      jitter: false,
      maxRetryAfterMs: 60_000,
    },
    timeouts: {
      modelIdleMs: config.modelIdleMs ?? NEVER_MS,
      ...(config.toolTimeoutMs !== undefined ? { toolMs: config.toolTimeoutMs } : {}),
    },
    ...(config.maxTurns !== undefined ? { maxTurns: config.maxTurns } : {}),
    clock,
    onSubscriberError: (error) => violations.push(`subscriber: an event subscriber threw: ${String(error)}`),
  };
  const agent = createAgent(options);
  agent.events.subscribe((event) => {
    events.push(event);
    momentOf.push(++moment);
    if (event.type === 'agentEnd' && runs.length > 0) runs[runs.length - 1]!.endedAtRelease = releases;
  });

  const runs: RunRecord[] = [];
  const sent: SentMessage[] = [];
  const plannedRuns = scenario.secondRun ? 2 : 1;

  const startRun = (index: number) => {
    // Recorded first: the run's first events (and re-entrant actions on them) fire inside prompt().
    const entry: RunRecord = { runId: null, result: null, aborts: [], endedAtRelease: null, startedAt: ++moment };
    runs.push(entry);
    let run;
    if (index === 0) {
      run = agent.prompt('go');
    } else {
      try {
        trace.push(`run ${index} starts: continue()`);
        run = agent.continue();
      } catch (error) {
        if (!(error instanceof AgentError) || error.code !== 'NothingToContinue') throw error;
        trace.push(`run ${index} starts: prompt('again') (nothing to continue)`);
        run = agent.prompt('again');
      }
    }
    entry.runId = run.runId;
    void run.result.then((result) => {
      entry.result = result;
      trace.push(`run ${index} ends: ${result.status}/${result.endReason}`);
      if (index + 1 < plannedRuns) startRun(index + 1);
    });
  };

  const perform = (index: number, action: Action) => {
    const running = agent.running;
    const during = running ? `during run ${runs.length - 1}` : 'between runs';
    switch (action.kind) {
      case 'abort':
        if (running) runs[runs.length - 1]!.aborts.push({ at: events.length, moment: ++moment, release: releases });
        trace.push(`action ${index}: abort (${during})`);
        agent.abort(`action ${index}`);
        return;
      case 'steer':
      case 'followUp': {
        const source = action.kind === 'steer' ? 'steering' : 'followUp';
        const text = `${action.kind} ${index}`;
        trace.push(`action ${index}: ${action.kind}("${text}") (${during})`);
        const message: SentMessage = {
          text,
          source,
          receipt: null,
          inHistoryWhenResolved: false,
          moment: ++moment,
          duringRun: running,
        };
        sent.push(message);
        void (source === 'steering' ? agent.steer(text) : agent.followUp(text)).then((receipt: SteerReceipt) => {
          message.receipt = receipt;
          message.inHistoryWhenResolved = agent.messages.some((m) => m.role === 'user' && m.content === text);
        });
        return;
      }
      case 'tick':
        trace.push(`action ${index}: clock +${action.ms} ms (${during})`);
        clock.increment(action.ms);
        return;
    }
  };

  // Re-entrant actions: performed inside the subscriber, while the runtime is emitting.
  const seen = new Map<string, number>();
  agent.events.subscribe((event) => {
    const nth = seen.get(event.type) ?? 0;
    seen.set(event.type, nth + 1);
    scenario.actions.forEach(({ action, trigger }, index) => {
      if (trigger.kind === 'event' && trigger.type === event.type && trigger.nth === nth) {
        trace.push(`action ${index} fires inside the subscriber of ${event.type} #${nth} (seq ${event.seq})`);
        perform(index, action);
      }
    });
  });

  startRun(0);
  scenario.actions.forEach(({ action, trigger }, index) => {
    if (trigger.kind !== 'steps') return;
    void (async () => {
      for (let step = 1; step <= trigger.after; step++)
        await gate(`action ${index} (${action.kind}) waits ${step}/${trigger.after}`);
      await gate(`action ${index}: ${action.kind}`);
      perform(index, action);
    })();
  });

  const stuck = await drive(scheduler, {
    finished: () => runs.length === plannedRuns && runs.every((run) => run.result !== null),
    onIdle: () => {
      const deadline = clock.nextDeadline();
      if (deadline !== null) {
        trace.push(`driver: clock → ${deadline} ms`);
        clock.set(Math.max(deadline, clock.now()));
        return true;
      }
      if (record.stalledStreams > 0 && agent.running) {
        trace.push(`driver: abort (a stalled stream holds run ${runs.length - 1})`);
        runs[runs.length - 1]!.aborts.push({ at: events.length, moment: ++moment, release: releases });
        agent.abort('driver: stalled stream');
        return true;
      }
      return false;
    },
  });
  if (stuck)
    violations.push(
      `${stuck} (runs started ${runs.length}/${plannedRuns}, ended ${runs.filter((r) => r.result).length})`,
    );
  if (runaway) violations.push(`runaway: more than ${MAX_TASKS} scheduler tasks`);
  if (agent.running) agent.abort('driver: cleanup');

  const checked: CheckInput = { scenario, agent, events, momentOf, runs, sent, record, modelCount: models.length };
  violations.push(...checkScenario(checked));
  return { violations, trace, events, results: runs.map((run) => run.result), checked };
}

/** One line per violation, then the driver's trace and the scheduler's order of tasks: what a reader needs to replay. */
export function describeReport(report: ScenarioReport, scheduler: TaskScheduler): string {
  return [
    `${report.violations.length} violation(s):`,
    ...report.violations.map((v) => `  - ${v}`),
    'driver trace:',
    ...report.trace.map((t) => `  ${t}`),
    'scheduler:',
    String(scheduler),
  ].join('\n');
}
