import type { AnyStateMachine } from 'xstate';
import type { Effect, GraphEdge, StateGraph, Walk } from './explore.js';

/** Counts every invariant evaluation and keeps the first violations, each with its path. */
export class Checks {
  count = 0;
  readonly violations: string[] = [];
  /** The names of the invariants that failed at least once. */
  readonly broken = new Set<string>();
  private path: readonly string[] = [];

  constructor(private readonly keep = 10) {}

  at(path: readonly string[]): void {
    this.path = path;
  }

  that(invariant: string, holds: boolean, detail?: () => string): void {
    this.count += 1;
    if (holds) return;
    this.broken.add(invariant);
    if (this.violations.length >= this.keep) return;
    const where = this.path.length > 0 ? this.path.join(' → ') : '(initial state)';
    this.violations.push(`${invariant}${detail ? `: ${detail()}` : ''}\n    path: ${where}`);
  }
}

/**
 * A path property: folds what a path has done so far (`observed`) step by step, and checks it at
 * every step and at the end of every maximal path.
 */
export interface Monitor<TMachine extends AnyStateMachine, TEnv, TObserved> {
  start(walk: Walk<TMachine, TEnv>, effects: readonly Effect[], checks: Checks): TObserved;
  step(
    observed: TObserved,
    from: Walk<TMachine, TEnv>,
    edge: GraphEdge,
    to: Walk<TMachine, TEnv>,
    checks: Checks,
  ): TObserved;
  end(observed: TObserved, last: Walk<TMachine, TEnv>, checks: Checks): void;
}

export interface PathStats {
  /** Maximal simple paths from the initial state (each ends in a state with no way on). */
  paths: number;
  longest: number;
}

/**
 * Walks every maximal simple path of the graph from its initial state (no state twice on one
 * path; a step that leaves the state unchanged is skipped). A path that can only go on by
 * revisiting one of its states is a loop that never ends: that is reported as a violation.
 */
export function checkEveryPath<TMachine extends AnyStateMachine, TEnv, TObserved>(
  graph: StateGraph<TMachine, TEnv>,
  monitor: Monitor<TMachine, TEnv, TObserved>,
  checks: Checks,
  maxPaths = 2_000_000,
): PathStats {
  const stats: PathStats = { paths: 0, longest: 0 };
  const onPath = new Set<string>();
  const labels: string[] = [];
  const visit = (key: string, observed: TObserved) => {
    const node = graph.nodes.get(key);
    if (!node) throw new Error(`model checking: no state ${key}`);
    onPath.add(key);
    let continued = false;
    for (const edge of node.edges) {
      if (edge.to === key) continue;
      if (onPath.has(edge.to)) {
        checks.at(labels);
        checks.that('every path ends', false, () => `${edge.label} loops back to an earlier state`);
        continue;
      }
      const next = graph.nodes.get(edge.to);
      if (!next) throw new Error(`model checking: no state ${edge.to}`);
      continued = true;
      labels.push(edge.label);
      checks.at(labels);
      visit(edge.to, monitor.step(observed, node.walk, edge, next.walk, checks));
      labels.pop();
    }
    if (!continued) {
      stats.paths += 1;
      if (stats.paths > maxPaths)
        throw new Error(`model checking: more than ${maxPaths} paths; tighten the environment's bounds`);
      stats.longest = Math.max(stats.longest, labels.length);
      checks.at(labels);
      monitor.end(observed, node.walk, checks);
    }
    onPath.delete(key);
  };
  const initial = graph.nodes.get(graph.initial);
  if (!initial) throw new Error('model checking: the graph has no initial state');
  checks.at([]);
  visit(graph.initial, monitor.start(initial.walk, graph.initialEffects, checks));
  return stats;
}

/**
 * Liveness of cancellation: from every state where the environment can send `abortLabel`, every
 * continuation after it ends in a final state accepted by `endsWell` — no state where nothing
 * can happen, no loop. Returns how many states were checked.
 */
export function checkAbortAlwaysEnds<TMachine extends AnyStateMachine, TEnv>(
  graph: StateGraph<TMachine, TEnv>,
  abortLabel: string,
  endsWell: (walk: Walk<TMachine, TEnv>) => string | null,
  checks: Checks,
): number {
  const verdicts = new Map<string, string | null>();
  const inProgress = new Set<string>();
  const verdictOf = (key: string, trail: string[]): string | null => {
    const known = verdicts.get(key);
    if (known !== undefined) return known;
    if (inProgress.has(key)) return `a loop after ${trail.join(' → ')}`;
    const node = graph.nodes.get(key);
    if (!node) throw new Error(`model checking: no state ${key}`);
    let verdict: string | null = null;
    if (node.walk.status !== 'active') {
      verdict = endsWell(node.walk);
    } else {
      const edges = node.edges.filter((edge) => edge.to !== key);
      if (edges.length === 0)
        verdict = `stuck in ${JSON.stringify(node.walk.snapshot.value)} after ${trail.join(' → ')}`;
      inProgress.add(key);
      for (const edge of edges) {
        verdict = verdictOf(edge.to, [...trail, edge.label]);
        if (verdict) break;
      }
      inProgress.delete(key);
    }
    verdicts.set(key, verdict);
    return verdict;
  };
  let checked = 0;
  for (const node of graph.nodes.values()) {
    const abort = node.edges.find((edge) => edge.label === abortLabel);
    if (!abort) continue;
    checked += 1;
    const verdict = verdictOf(abort.to, [abortLabel]);
    checks.at([]);
    checks.that(
      `${abortLabel} from ${JSON.stringify(node.walk.snapshot.value)} reaches a final state`,
      verdict === null,
      () => verdict ?? '',
    );
  }
  return checked;
}
