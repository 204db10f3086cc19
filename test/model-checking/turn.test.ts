import { describe, expect, it } from 'vitest';
import { getSimplePaths } from 'xstate/graph';
import { turnMachine } from '../../machines/turn.machine.js';
import type { TurnFeatures, TurnInput, TurnOutput } from '../../machines/turn.types.js';
import { restingStates, visitedStates } from './harness/coverage.js';
import { explore } from './harness/explore.js';
import { Checks, checkAbortAlwaysEnds, checkEveryPath } from './harness/paths.js';
import { STANDARD_REPLIES } from './turn-fixtures.js';
import { endsAborted, turnMonitor } from './turn-monitor.js';
import {
  ALL_FEATURES,
  NO_FEATURES,
  provideTurn,
  resumedInput,
  turnEnvironment,
  turnInput,
  type AttemptName,
  type TurnConfig,
} from './turn-model.js';
import { reportStats } from '../support/stats.js';
import { expectFigure } from '../figures/expect.js';
import { PathTally, render } from '../figures/figures.js';

const approvals: TurnConfig = { name: 'approvals', approvals: true, partition: 'valid', replies: STANDARD_REPLIES };
const plain: TurnConfig = { ...approvals, name: 'no approvals', approvals: false };
const invalidPartition: TurnConfig = { ...plain, name: 'invalid partition', partition: 'invalid' };
const threeByHandler: TurnConfig = {
  ...approvals,
  name: 'three approvals, handler',
  replies: ['threeWrites'],
  answers: 'handlerYesNo',
};
const threeByResolve: TurnConfig = {
  ...threeByHandler,
  name: 'three approvals, resolveApproval',
  answers: 'resolveYesNo',
};
const PARALLEL: TurnFeatures = { ...NO_FEATURES, execution: { kind: 'parallel' } };
const POOL: TurnFeatures = { ...NO_FEATURES, execution: { kind: 'pool', limit: 1 } };

const CASES: Array<{ config: TurnConfig; features: TurnFeatures; attempt: AttemptName | TurnInput; name: string }> = [
  {
    config: approvals,
    features: ALL_FEATURES,
    attempt: 'freshWithRecovery',
    name: 'all policies, approvals / fresh with recovery',
  },
  {
    config: approvals,
    features: ALL_FEATURES,
    attempt: 'freshLastChance',
    name: 'all policies, approvals / fresh, last chance',
  },
  { config: plain, features: NO_FEATURES, attempt: 'retryLastChance', name: 'no policies / retry, last chance' },
  { config: plain, features: NO_FEATURES, attempt: 'overflowRetry', name: 'no policies / overflow re-run' },
  {
    config: invalidPartition,
    features: { ...NO_FEATURES, steeringInterrupts: false },
    attempt: 'freshWithRecovery',
    name: 'steering waits, invalid partition / fresh',
  },
  {
    config: approvals,
    features: ALL_FEATURES,
    attempt: 'retryAfterSteering',
    name: 'all policies, approvals / re-run after steering during a backoff',
  },
  {
    config: plain,
    features: PARALLEL,
    attempt: 'freshLastChance',
    name: 'parallel batch started at once (the hot path) / fresh, last chance',
  },
  {
    config: approvals,
    features: POOL,
    attempt: 'freshLastChance',
    name: 'a pool of one, approvals / fresh, last chance',
  },
  {
    config: threeByHandler,
    features: PARALLEL,
    attempt: 'freshLastChance',
    name: 'a batch of three approvals decided by the handler in every order',
  },
  {
    config: threeByResolve,
    features: PARALLEL,
    attempt: 'freshLastChance',
    name: 'a batch of three approvals decided by resolveApproval in every order',
  },
  { config: plain, features: NO_FEATURES, attempt: 'closing', name: 'closing a turn a deferred failure left open' },
  {
    config: approvals,
    features: ALL_FEATURES,
    attempt: resumedInput(ALL_FEATURES),
    name: 'resumed after a crash with its tool-call reply published',
  },
];

// What the configurations reached together (the last test checks that nothing was left out).
const visited = new Set<string>();
const endings = new Set<string>();
const tally = new PathTally();

describe('model checking: turn machine', () => {
  it.each(CASES)(
    '$name: lifecycle invariants on every path; ABORT from every state ends the turn aborted',
    ({ config, features, attempt, name }) => {
      const input = typeof attempt === 'string' ? turnInput(features, attempt) : attempt;
      const graph = explore(provideTurn(), turnEnvironment(config), { input, limit: 20_000 });
      const checks = new Checks();
      const stats = checkEveryPath(graph, turnMonitor(input), checks);
      const abortChecked = checkAbortAlwaysEnds(graph, 'ABORT', endsAborted, checks);
      reportStats(
        `turn [${name}]: ${graph.nodes.size} states, ${graph.edgeCount} transitions, ` +
          `${stats.paths} paths (longest ${stats.longest}), ${abortChecked} abort checks, ${checks.count} invariants checked`,
      );
      expect(checks.violations).toEqual([]);
      tally.add(stats.paths, graph.nodes.size);

      for (const id of visitedStates(graph)) visited.add(id);
      for (const node of graph.nodes.values()) {
        const output = node.walk.snapshot.output as TurnOutput | undefined;
        if (output) endings.add(`${output.kind}/${output.turnEndReason ?? 'open'}`);
      }
    },
  );

  it("xstate/graph's getSimplePaths finds the same paths to final states as the path checker", () => {
    const input = turnInput(NO_FEATURES, 'retryLastChance');
    const graph = explore(provideTurn(), turnEnvironment(plain), { input, limit: 20_000 });
    const stats = checkEveryPath(graph, turnMonitor(input), new Checks());
    const simplePaths = getSimplePaths(graph.logic, { ...graph.traversal, toState: (walk) => walk.status === 'done' });
    expect(simplePaths.length).toBe(stats.paths);
  });

  it('the configurations together reach every resting state and every kind of turn end', () => {
    expect([...visited].sort()).toEqual(restingStates(turnMachine));
    const reasons = new Set([...endings].map((ending) => ending.split('/')[1]));
    expect([...reasons].sort()).toEqual([
      'aborted',
      'complete',
      'error',
      'open',
      'steeringInterrupt',
      'stopped',
      'toolsExecuted',
    ]);
    const kinds = new Set([...endings].map((ending) => ending.split('/')[0]));
    expect([...kinds].sort()).toEqual(['aborted', 'failure', 'finished', 'success']);
  });

  it('the docs state the paths these configurations explored (npm run figures writes them)', () => {
    expect(tally.configurations).toBe(CASES.length);
    expectFigure('paths-turn', render.paths(tally));
  });
});
