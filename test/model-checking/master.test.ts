import { describe, expect, it } from 'vitest';
import { masterMachine } from '../../machines/master.machine.js';
import type { MasterOutput } from '../../machines/master.types.js';
import { restingStates, visitedStates } from './harness/coverage.js';
import { explore } from './harness/explore.js';
import { Checks, checkAbortAlwaysEnds, checkEveryPath } from './harness/paths.js';
import { masterMonitor } from './master-monitor.js';
import { masterEnvironment, provideMaster, session, type MasterConfig, type MasterWalk } from './master-model.js';
import { PROGRESS_TOOL, REPORT_TOOL, STANDARD_REPLIES } from './turn-fixtures.js';
import { NO_FEATURES, type TurnConfig } from './turn-model.js';
import { reportStats } from '../support/stats.js';
import { expectFigure } from '../figures/expect.js';
import { PathTally, render } from '../figures/figures.js';

const POLICIES = { ...NO_FEATURES, preTurnPolicies: true, postTurnPolicies: true };
const turn: TurnConfig = { name: 'no approvals', approvals: false, partition: 'valid', replies: STANDARD_REPLIES };
const lean: TurnConfig = { ...turn, replies: ['text', 'oneCall', 'rateLimited', 'authFailed'] };
const plainFeatures = NO_FEATURES;

/** Each configuration exercises one part of the master; together they reach every resting state and end reason. */
const CASES: MasterConfig[] = [
  {
    name: 'recovery: 2 turns × 2 attempts, overflow, post-loop',
    input: session({ turnFeatures: POLICIES, postLoopPolicies: true }),
    turn,
    maxSteers: 0,
    maxFollowUps: 0,
  },
  {
    name: 'fallback: 1 turn × 2 attempts, 2 models',
    input: session({ turnFeatures: POLICIES, maxTurns: 1, modelCount: 2 }),
    turn,
    maxSteers: 0,
    maxFollowUps: 0,
  },
  {
    name: 'steering: 2 messages, one at a time',
    input: session({ maxTurns: 3, maxAttempts: 1, postLoopPolicies: true, turnFeatures: plainFeatures }),
    turn: lean,
    maxSteers: 2,
    maxFollowUps: 0,
  },
  {
    name: 'steering during a backoff: 1 turn × 2 attempts, 1 message',
    input: session({ maxTurns: 2, maxAttempts: 2, turnFeatures: plainFeatures }),
    turn: lean,
    maxSteers: 1,
    maxFollowUps: 0,
  },
  {
    name: 'follow-ups: 2 messages, all at once, text replies',
    input: session({ maxTurns: 3, maxAttempts: 1, followUpMode: 'all', turnFeatures: plainFeatures }),
    turn: { ...lean, replies: ['text', 'rateLimited', 'authFailed'] },
    maxSteers: 0,
    maxFollowUps: 2,
  },
  {
    name: 'report mode: 2 turns, no retry of a failed turn',
    input: session({
      turnFeatures: POLICIES,
      maxAttempts: 1,
      reportToolName: REPORT_TOOL,
      progressToolNames: [PROGRESS_TOOL],
    }),
    turn: {
      ...turn,
      replies: [...STANDARD_REPLIES.filter((name) => name !== 'contextOverflow'), 'report', 'progress'],
    },
    maxSteers: 0,
    maxFollowUps: 0,
  },
];

// What the configurations reached together (the last test checks that nothing was left out).
const visited = new Set<string>();
const endings = new Set<string>();
const tally = new PathTally();

const endsAborted = (walk: MasterWalk) =>
  // A STOP after the ABORT decides the end instead (the other check).
  walk.snapshot.output?.status === 'aborted' || walk.snapshot.output?.by === 'runtime'
    ? null
    : `ended ${walk.snapshot.output?.status ?? JSON.stringify(walk.snapshot.value)}`;
const endsStopped = (walk: MasterWalk) => {
  const output = walk.snapshot.output;
  return output?.by === 'runtime' && output.status === 'failed' && output.endReason === 'fatalError'
    ? null
    : `ended ${output ? `${output.status}/${output.endReason}` : JSON.stringify(walk.snapshot.value)}`;
};

describe('model checking: master machine', () => {
  it.each(CASES)(
    '$name: session invariants on every path; ABORT from every running state ends the session aborted, STOP failed',
    (config) => {
      const graph = explore(provideMaster(), masterEnvironment(config), { input: config.input, limit: 10_000 });
      const checks = new Checks();
      const stats = checkEveryPath(graph, masterMonitor(config.input), checks);
      const abortChecked =
        checkAbortAlwaysEnds(graph, 'ABORT', endsAborted, checks) +
        checkAbortAlwaysEnds(graph, 'STOP', endsStopped, checks);
      reportStats(
        `master [${config.name}]: ${graph.nodes.size} states, ${graph.edgeCount} transitions, ${stats.paths} paths (longest ${stats.longest}), ` +
          `${abortChecked} abort checks, ${checks.count} invariants checked`,
      );
      expect(checks.violations).toEqual([]);
      tally.add(stats.paths, graph.nodes.size);

      for (const id of visitedStates(graph)) visited.add(id);
      for (const node of graph.nodes.values()) {
        const output = node.walk.snapshot.output as MasterOutput | undefined;
        if (output) endings.add(`${output.status}/${output.endReason}`);
      }
    },
  );

  it('the configurations together reach every resting state and every end reason', () => {
    expect([...visited].sort()).toEqual(restingStates(masterMachine));
    expect([...endings].sort()).toEqual([
      'aborted/aborted',
      'completed/finalReport',
      'completed/naturalEnd',
      'completed/policyStop',
      'failed/fatalError',
      'failed/maxTurns',
      'failed/retryExhausted',
    ]);
  });

  it('the docs state the paths these configurations explored (npm run figures writes them)', () => {
    expect(tally.configurations).toBe(CASES.length);
    expectFigure('paths-master', render.paths(tally));
  });
});
