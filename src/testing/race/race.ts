import { lazyPackage } from '../../peers/optional-sdk.js';
import { pathProblems } from '../explore/checks.js';
import { describeViolation } from '../explore/describe.js';
import { AgentCheckError, toViolation } from '../explore/explore.js';
import { Session, type PathRecord } from '../explore/session.js';
import { compileSpec, type Spec } from '../explore/spec.js';
import type { AgentUnderTest, ExploreOptions, Step } from '../explore/types.js';
import type { Task } from '../explore/world.js';
import { stepOf } from '../explore/path.js';
import { drive, type TaskScheduler } from './scheduler.js';

/**
 * raceAgent (model-check your own agent): the user's agent with its real tool bodies, its model replaced by the
 * alphabet, and fast-check's scheduler deciding in which order model replies, tool completions,
 * approval answers, timers and the interruptions reach it. fast-check draws the plan (which reply,
 * which answer, which interruption after how many scheduler steps), shrinks a failure, and prints
 * the seed and path that replay it.
 */

export interface RaceOptions extends Omit<
  ExploreOptions,
  'path' | 'toolBodies' | 'toolOrder' | 'reentrant' | 'maxPaths' | 'maxViolations'
> {
  /** Interleavings tried. Default 100. */
  runs?: number;
  /** fast-check's seed (printed with a failure). */
  seed?: number;
  /** fast-check's replay path (printed with a failure, with its seed). */
  path?: string;
  /** Real milliseconds to wait for tool bodies that do real I/O before calling a run hung. Default 1,000. */
  patienceMs?: number;
}

export interface RaceResult {
  runs: number;
  seed: number;
}

/** What fast-check draws for one run: choices by ordinal (cycled), the faults, the interruptions and their delays. */
interface Plan {
  replies: number[];
  answers: number[];
  faults: Array<{ kind: 'toolError' | 'modelError'; nth: number }>;
  interruptions: Array<{ kind: 'steer' | 'followUp' | 'abort' | 'crash'; after: number }>;
}

type FastCheck = typeof import('fast-check');

const loadFastCheck = lazyPackage<FastCheck>(
  { name: 'fast-check', range: '^4.2.0', neededBy: 'raceAgent (agentchart/testing)' },
  () => import('fast-check'),
);

export async function raceAgent(agent: AgentUnderTest, options: RaceOptions): Promise<RaceResult> {
  const fc = await loadFastCheck();
  const { runs = 100, seed, path, patienceMs = 1_000, ...explore } = options;
  const spec = compileSpec(agent, { ...explore, toolBodies: 'real' });
  let failure: { record: PathRecord; problems: string[]; order: string } | null = null;
  const property = fc.asyncProperty(planArbitrary(fc, spec), fc.scheduler(), async (plan, scheduler) => {
    const record = await runRace(spec, plan, scheduler, patienceMs);
    const problems = pathProblems(spec, record);
    if (problems.length === 0) return true;
    // The last failing run is fast-check's shrunk counterexample.
    failure = { record, problems, order: String(scheduler) };
    return false;
  });
  const details = await fc.check(property, {
    numRuns: runs,
    ...(seed !== undefined ? { seed } : {}),
    ...(path !== undefined ? { path, endOnFailure: true } : {}),
  });
  if (details.failed && failure) {
    const { record, problems } = failure as { record: PathRecord; problems: string[] };
    const violation = toViolation(record, problems);
    const head =
      `raceAgent: a run breaks the invariants or the property (run ${details.numRuns} of ${runs}, shrunk ${details.numShrinks} times). ` +
      `Replay it with { seed: ${details.seed}, path: '${details.counterexamplePath ?? ''}' }:`;
    throw new AgentCheckError(`${head}\n${describeViolation(violation, spec.replies)}`, {
      violation,
      seed: details.seed,
      path: details.counterexamplePath ?? '',
    });
  }
  if (details.failed)
    throw details.errorInstance instanceof Error ? details.errorInstance : new Error(String(details.errorInstance));
  return { runs: details.numRuns, seed: details.seed };
}

function planArbitrary(fc: FastCheck, spec: Spec) {
  const index = (size: number) => fc.array(fc.nat({ max: Math.max(0, size - 1) }), { minLength: 1, maxLength: 6 });
  const faultKinds = (['toolError', 'modelError'] as const).filter((kind) => spec.interruptions.has(kind));
  const interruptionKinds = (['steer', 'followUp', 'abort', 'crash'] as const).filter((kind) =>
    spec.interruptions.has(kind),
  );
  const budget = spec.maxInterruptions;
  const faults =
    faultKinds.length > 0
      ? fc.array(fc.record({ kind: fc.constantFrom(...faultKinds), nth: fc.nat({ max: 5 }) }), { maxLength: budget })
      : fc.constant([]);
  const interruptions =
    interruptionKinds.length > 0
      ? fc.array(fc.record({ kind: fc.constantFrom(...interruptionKinds), after: fc.nat({ max: 12 }) }), {
          maxLength: budget,
        })
      : fc.constant([]);
  return fc
    .record({ replies: index(spec.replies.size), answers: index(spec.approvals.size), faults, interruptions })
    .map((plan): Plan => {
      // Faults and interruptions share the budget: the first ones drawn are kept.
      const interruptionsKept = plan.interruptions.slice(0, budget);
      return {
        ...plan,
        interruptions: interruptionsKept,
        faults: plan.faults.slice(0, budget - interruptionsKept.length),
      };
    });
}

/** One run of the agent: the scheduler releases every wait on the world, the plan's interruptions among them. */
async function runRace(spec: Spec, plan: Plan, scheduler: TaskScheduler, patienceMs: number): Promise<PathRecord> {
  const replyNames = [...spec.replies.keys()];
  const answerNames = [...spec.approvals.keys()];
  const ordinals = { model: 0, tool: 0, approval: 0 };
  const fault = (kind: 'toolError' | 'modelError', nth: number) =>
    plan.faults.some((f) => f.kind === kind && f.nth === nth);
  const release = (label: string, step: () => Step | null, act: () => void) => {
    void scheduler.schedule(Promise.resolve(), label).then(() => {
      const recorded = step();
      if (recorded) session.recordStep(recorded);
      act();
    });
  };
  const schedule = (task: Task) => {
    const nth = ordinals[task.kind]++;
    let choice: string;
    if (task.kind === 'model')
      choice = fault('modelError', nth)
        ? 'modelError'
        : `reply ${replyNames[plan.replies[nth % plan.replies.length]!]!}`;
    else if (task.kind === 'tool') choice = fault('toolError', nth) ? 'error' : 'ok';
    else choice = answerNames[plan.answers[nth % plan.answers.length]!]!;
    release(
      `${choice} ${task.subject}`,
      () => (session.current.world.tasks().includes(task) ? stepOf(task, choice, spec.approvals) : null),
      () => task.release(choice),
    );
  };
  const session: Session = new Session(spec, {
    onProcess: (process) => process.world.watchers.push(schedule),
    onClock: (clock) => {
      // Time passes alongside everything else: a timer's deadline comes at a step the scheduler picks.
      clock.onTimer = (id, deadline) => {
        release(
          `clock reaches ${deadline} ms`,
          () =>
            clock.isPending(id) ? { kind: 'clock', label: `clock +${deadline - clock.now()}ms`, toMs: deadline } : null,
          () => {
            if (clock.isPending(id)) clock.set(Math.max(deadline, clock.now()));
          },
        );
      };
    },
    onEvent: (event, process) => {
      // Durable approvals (a store for crashes): answered through resolveApproval.
      if (event.type !== 'toolApprovalRequested' || !process.store || answerNames.length === 0) return;
      const nth = ordinals.approval++;
      const name = answerNames[plan.answers[nth % plan.answers.length]!]!;
      const decision = spec.approvals.get(name)!;
      const pending = () => process.agent.pendingApprovals().find((p) => p.toolCallId === event.toolCallId);
      release(
        `${name} ${event.toolCallId}`,
        () =>
          pending()
            ? {
                kind: 'approval',
                label: `${name} ${event.toolCallId}`,
                toolCallId: event.toolCallId,
                toolName: event.toolName,
                decision: name,
                value: decision,
              }
            : null,
        () => {
          const waiting = pending();
          if (waiting && !process.dead)
            process.agent.resolveApproval(waiting.toolCallId, decision, { version: waiting.version });
        },
      );
    },
  });
  await session.start();
  plan.interruptions.forEach(({ kind, after }, index) => {
    void (async () => {
      for (let step = 0; step < after; step++)
        await scheduler.schedule(Promise.resolve(), `interruption ${index} (${kind}) waits ${step + 1}/${after}`);
      await scheduler.schedule(Promise.resolve(), `interruption ${index}: ${kind}`);
      if (!session.running) return;
      const during = session.during();
      if (kind === 'abort') {
        session.recordStep({ kind, label: kind, during });
        session.abort(false);
      } else if (kind === 'crash') {
        if (!session.current.store) return;
        session.recordStep({ kind, label: kind, during });
        await session.crash();
      } else {
        session.recordStep({ kind, label: kind, text: session.send(kind).text, during });
      }
    })();
  });
  const stuck = await drive(scheduler, { finished: () => !session.running, patienceMs });
  return session.finish(stuck);
}
