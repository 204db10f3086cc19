import { describe, expect, it } from 'vitest';
import { getSimplePaths } from 'xstate/graph';
import { explore } from './harness/explore.js';
import { Checks, checkAbortAlwaysEnds, checkEveryPath } from './harness/paths.js';
import { CALL, provideToolCall, TIME_LIMIT_MS, toolCallEnvironment, toolCallMonitor } from './tool-call-model.js';
import { reportStats } from '../support/stats.js';

const CASES = [
  { name: 'no time limit', timeoutMs: null, finals: ['cancelled', 'failed', 'succeeded'] },
  { name: `a ${TIME_LIMIT_MS} ms time limit`, timeoutMs: TIME_LIMIT_MS, finals: ['cancelled', 'failed', 'succeeded', 'timedOut'] },
];

describe('model checking: tool-call machine', () => {
  it.each(CASES)('$name: every path has one start, one end, one result for the call; cancel always ends it', ({ name, timeoutMs, finals: expectedFinals }) => {
    const graph = explore(provideToolCall(), toolCallEnvironment, { input: { position: 0, call: CALL, timeoutMs }, limit: 1_000 });
    const checks = new Checks();
    const stats = checkEveryPath(graph, toolCallMonitor, checks);
    const abortChecked = checkAbortAlwaysEnds(
      graph,
      'cancel:abort',
      (walk) => (walk.snapshot.value === 'cancelled' && walk.snapshot.output?.result?.isError === true ? null : `ended in ${String(walk.snapshot.value)}`),
      checks,
    );
    reportStats(
      `tool-call [${name}]: ${graph.nodes.size} states, ${graph.edgeCount} transitions, ${stats.paths} paths, ` +
        `${abortChecked} abort checks, ${checks.count} invariants checked`,
    );
    expect(checks.violations).toEqual([]);
    // Every final state is reachable, each with its own paths (the exploration is not vacuous).
    const finals = [...graph.nodes.values()].filter((node) => node.walk.status === 'done').map((node) => String(node.walk.snapshot.value));
    expect([...new Set(finals)].sort()).toEqual(expectedFinals);
    expect(stats.paths).toBe(finals.length);
    // xstate/graph's own simple-path search over the same graph finds the same paths.
    const simplePaths = getSimplePaths(graph.logic, { ...graph.traversal, toState: (walk) => walk.status === 'done' });
    expect(simplePaths.length).toBe(stats.paths);
  });
});
