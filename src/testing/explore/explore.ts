import { AgentError } from '../../domain/errors.js';
import { pathProblems } from './checks.js';
import { describeFailure } from './describe.js';
import { runPath, type PathHooks } from './path.js';
import type { PathRecord } from './session.js';
import { DepthFirst, replayChooser } from './search.js';
import { compileSpec, REPLAY_SEPARATOR, type Spec } from './spec.js';
import type { AgentUnderTest, ExploreOptions, ExploreResult, Step, Violation } from './types.js';

/** What a kept violation was found with: writeTrace replays it. */
const origins = new WeakMap<Violation, Spec>();

export function specOf(violation: Violation): Spec | undefined {
  return origins.get(violation);
}

/**
 * Explores every path of the agent within the bounds: each model call answered with
 * each reply of the alphabet, each interruption landed at each point where the run waits on the
 * world, on a simulated clock. A state met again (same log so far, same waits, same timers, same
 * budget left) is not explored twice. Every complete path is checked against the invariants and
 * the property; violations come simplest first (fewest interruptions, then fewest steps).
 */
export async function exploreAgent(agent: AgentUnderTest, options: ExploreOptions): Promise<ExploreResult> {
  const spec = compileSpec(agent, options);
  const started = performance.now();
  const states = new Map<string, number>();
  const result: ExploreResult = {
    paths: 0,
    states: 0,
    pruned: 0,
    violating: 0,
    violations: [],
    complete: true,
    longest: 0,
    elapsedMs: 0,
    pathsPerSecond: 0,
  };

  const check = (record: PathRecord) => {
    result.paths++;
    result.longest = Math.max(result.longest, record.steps.length);
    const problems = pathProblems(spec, record);
    if (problems.length === 0) return;
    result.violating++;
    keep(result.violations, toViolation(record, problems), spec.maxViolations);
  };

  if (spec.replay) {
    const chooser = replayChooser(spec.replay);
    const record = await runPath(spec, { chooser, visit: () => true });
    const left = chooser.remaining();
    if (left.length > 0) {
      throw new AgentError(
        'InvalidInput',
        `exploreAgent: the path ended before its step "${left[0]}" (${left.length} steps left).`,
      );
    }
    check(record);
  } else {
    const search = new DepthFirst();
    const hooks: Omit<PathHooks, 'chooser'> = {
      visit: (key, depth) => {
        const seen = states.get(key);
        // States on the replayed prefix were met by the execution that chose it: go on.
        if (search.replaying()) {
          if (seen === undefined || depth < seen) states.set(key, depth);
          return true;
        }
        // Met before at the same depth or shallower: its future was (or is being) explored. A shorter route goes on.
        if (seen !== undefined && seen <= depth) return false;
        states.set(key, depth);
        return true;
      },
    };
    for (let chooser = search.next(); chooser; chooser = search.next()) {
      if (result.paths >= spec.maxPaths) {
        result.complete = false;
        break;
      }
      const record = await runPath(spec, { ...hooks, chooser });
      search.backtrack();
      if (record.pruned) result.pruned++;
      else check(record);
    }
  }
  result.states = states.size;
  result.elapsedMs = Math.round(performance.now() - started);
  result.pathsPerSecond = result.elapsedMs > 0 ? Math.round((result.paths * 1000) / result.elapsedMs) : result.paths;
  for (const violation of result.violations) origins.set(violation, spec);
  return result;
}

/**
 * Explores like exploreAgent and throws the simplest counterexample (fewest interruptions, then fewest steps),
 * readable, if any path breaks (or when maxPaths stopped it before the bound was exhausted).
 */
export async function assertAgent(agent: AgentUnderTest, options: ExploreOptions): Promise<ExploreResult> {
  const result = await exploreAgent(agent, options);
  if (result.violations.length > 0 || !result.complete) {
    throw new AgentCheckError(describeFailure(result, compileSpec(agent, options).replies), {
      result,
      violation: result.violations[0],
    });
  }
  return result;
}

/** Thrown by assertAgent and raceAgent: the readable counterexample, and the details to work with. */
export class AgentCheckError extends Error {
  override readonly name = 'AgentCheckError';
  /** assertAgent: the whole exploration. */
  readonly result?: ExploreResult;
  /** The (simplest, or shrunk) counterexample; absent when the exploration only ran out of maxPaths. */
  readonly violation?: Violation;
  /** raceAgent: what replays the failing run. */
  readonly seed?: number;
  readonly path?: string;

  constructor(
    message: string,
    details: { result?: ExploreResult; violation?: Violation | undefined; seed?: number; path?: string },
  ) {
    super(message);
    Object.assign(this, details);
  }
}

export function toViolation(record: PathRecord, problems: string[]): Violation {
  return {
    path: record.steps,
    replay: record.steps.map((step) => step.label).join(REPLAY_SEPARATOR),
    log: record.log,
    messages: record.messages,
    message: problems.join('\n'),
    problems,
  };
}

/**
 * Keeps the `max` simplest violations, in order: fewer interruptions first, then fewer steps, then a shorter log.
 * Interruptions first, because the shortest path to the end of a run is often an abort: a path that breaks the
 * property on its own (and then ends as the model decides) shows what broke it, one that adds an abort after
 * the harm shows a step that did not matter.
 */
function keep(kept: Violation[], violation: Violation, max: number): void {
  const interruptions = (v: Violation) => v.path.filter(isInterruption).length;
  const size = (v: Violation) => [interruptions(v), v.path.length, v.log.length];
  const before = (a: number[], b: number[]) => {
    const i = a.findIndex((n, j) => n !== b[j]);
    return i >= 0 && a[i]! < b[i]!;
  };
  let index = kept.findIndex((other) => before(size(violation), size(other)));
  if (index === -1) index = kept.length;
  if (index >= max) return;
  kept.splice(index, 0, violation);
  if (kept.length > max) kept.pop();
}

function isInterruption(step: Step): boolean {
  return (
    step.kind === 'steer' ||
    step.kind === 'followUp' ||
    step.kind === 'abort' ||
    step.kind === 'crash' ||
    step.kind === 'modelError' ||
    (step.kind === 'tool' && step.outcome === 'error')
  );
}
