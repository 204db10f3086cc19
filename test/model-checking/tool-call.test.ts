import { describe, expect, it } from 'vitest';
import { getSimplePaths } from 'xstate/graph';
import { explore } from './harness/explore.js';
import { Checks, checkAbortAlwaysEnds, checkEveryPath } from './harness/paths.js';
import {
  callInput,
  exploreLogic,
  provideToolCall,
  TIME_LIMIT_MS,
  toolCallEnvironment,
  toolCallMonitor,
} from './tool-call-model.js';
import { reportStats } from '../support/stats.js';
import { expectFigure } from '../figures/expect.js';
import { PathTally, render } from '../figures/figures.js';

const CASES = [
  { name: 'no time limit', timeoutMs: null, finals: ['cancelled', 'failed', 'skipped', 'succeeded'] },
  {
    name: `a ${TIME_LIMIT_MS} ms time limit`,
    timeoutMs: TIME_LIMIT_MS,
    finals: ['cancelled', 'failed', 'skipped', 'succeeded', 'timedOut'],
  },
];

const tally = new PathTally();

describe('model checking: tool-call machine', () => {
  it.each(CASES)(
    '$name: every path has one end, a start iff it started, one result for the call; cancel always ends it',
    ({ name, timeoutMs, finals: expectedFinals }) => {
      const graph = explore(provideToolCall(), toolCallEnvironment, { input: callInput(timeoutMs), limit: 1_000 });
      const checks = new Checks();
      const stats = checkEveryPath(graph, toolCallMonitor, checks);
      const abortChecked = checkAbortAlwaysEnds(
        graph,
        'cancel:abort',
        (walk) =>
          ['cancelled', 'skipped'].includes(String(walk.snapshot.value)) &&
          walk.snapshot.output?.result?.isError === true
            ? null
            : `ended in ${String(walk.snapshot.value)}`,
        checks,
      );
      reportStats(
        `tool-call [${name}]: ${graph.nodes.size} states, ${graph.edgeCount} transitions, ${stats.paths} paths, ` +
          `${abortChecked} abort checks, ${checks.count} invariants checked`,
      );
      expect(checks.violations).toEqual([]);
      tally.add(stats.paths, graph.nodes.size);
      // Every final state is reachable, each with its own paths (the exploration is not vacuous).
      const finals = [...graph.nodes.values()]
        .filter((node) => node.walk.status === 'done')
        .map((node) => String(node.walk.snapshot.value));
      expect([...new Set(finals)].sort()).toEqual(expectedFinals);
      // xstate/graph's own simple-path search over the same graph finds the same paths.
      const simplePaths = getSimplePaths(graph.logic, {
        ...graph.traversal,
        toState: (walk) => walk.status === 'done',
      });
      expect(simplePaths.length).toBe(stats.paths);
    },
  );

  it.each(CASES)('$name: the light actor logic the runtime runs has the same graph as the chart', ({ timeoutMs }) => {
    const chart = explore(provideToolCall(), toolCallEnvironment, { input: callInput(timeoutMs), limit: 1_000 });
    const keyOf = (
      snapshot: { value: unknown; status: string; context: { result: unknown; started: boolean } },
      env: unknown,
    ) =>
      `${JSON.stringify([snapshot.value, snapshot.status, snapshot.context.result, snapshot.context.started])}|${JSON.stringify(env)}`;
    const chartGraph = new Map<string, Map<string, { to: string; effects: string[] }>>();
    for (const node of chart.nodes.values()) {
      const edges = new Map<string, { to: string; effects: string[] }>();
      for (const edge of node.edges) {
        const target = chart.nodes.get(edge.to);
        if (!target) throw new Error('no target');
        edges.set(edge.label, {
          to: keyOf(target.walk.snapshot, target.walk.env),
          effects: edge.effects.map((effect) => effect.action),
        });
      }
      chartGraph.set(keyOf(node.walk.snapshot, node.walk.env), edges);
    }
    const light = exploreLogic(callInput(timeoutMs));
    // The same states …
    expect([...light.keys()].sort()).toEqual([...chartGraph.keys()].sort());
    // … and from each, every move the chart takes leads where the logic goes, with the same effects;
    // a move the chart does not offer there leaves the logic where it was.
    for (const [key, { edges }] of light) {
      const chartEdges = chartGraph.get(key) ?? new Map();
      for (const [label, edge] of edges) {
        const expected = chartEdges.get(label) ?? { to: key, effects: [] };
        expect({ from: key, label, ...edge }).toEqual({ from: key, label, ...expected });
      }
    }
  });

  it('the docs state the paths these configurations explored (npm run figures writes them)', () => {
    expect(tally.configurations).toBe(CASES.length);
    expectFigure('paths-tool-call', render.paths(tally));
  });
});
