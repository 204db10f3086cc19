import { describe, expect, it } from 'vitest';
import { createAgent } from 'agentchart';
import { exploreAgent, type ExploreResult } from 'agentchart/testing';
import { reportStats } from '../support/stats.js';
import {
  DEPLOY_REPLIES,
  REPORT_REPLIES,
  deployAgent,
  deploysRunAsApproved,
  pinToProd,
  policiesNeverRefused,
  reinjectDeclined,
  reportAgent,
  whatRanStaysInHistory,
} from './fixtures.js';

/**
 * Bugs a user could write into their agent's configuration, each found by exploring it: the first
 * counterexample is the minimal path (fewest interruptions, then fewest steps; the exploration is exhaustive
 * within its bound, so no simpler path breaks), and the same agent without the bug explores its bound clean.
 */

const labels = (result: ExploreResult) => result.violations[0]?.path.map((step) => step.label);
const stats = (name: string, result: ExploreResult) =>
  reportStats(
    `explore [${name}]: ${result.paths} paths, ${result.states} states, ${result.pruned} pruned, ${result.violating} violating, ` +
      `longest ${result.longest} steps, ${result.elapsedMs} ms (${result.pathsPerSecond} paths/s)`,
  );

describe('planted bugs in user configurations are found with a minimal counterexample', () => {
  it('a post-turn policy that re-injects a declined call: refused after deny (parity holds), in 3 steps', async () => {
    const options = {
      replies: DEPLOY_REPLIES,
      interruptions: ['approve', 'deny', 'steer', 'abort'] as const,
      property: policiesNeverRefused,
    };
    const broken = await exploreAgent(deployAgent({ postTurn: [reinjectDeclined] }), options);
    stats('re-injected declined call', broken);
    expect(labels(broken)).toEqual(['reply deploy', 'deny call_0_0', 'reply done']);
    expect(broken.violations[0]!.problems).toEqual([
      'property: postTurn policy refused: policy returned an invalid verdict: the injected messages would break tool-call/result pairs in history (tool call call_0_0_again of message 0 has no result before the end of the history)',
    ]);
    const fixed = await exploreAgent(deployAgent(), options);
    stats('without the re-injecting policy', fixed);
    expect([fixed.violating, fixed.complete]).toEqual([0, true]);
  });

  it('a pre-dispatch policy that rewrites arguments after the approval: the approved staging deploy runs in prod, in 4 steps', async () => {
    const options = {
      replies: DEPLOY_REPLIES,
      interruptions: ['approve', 'deny'] as const,
      approvals: { staging: { approved: true as const, arguments: { env: 'staging' } } },
      property: deploysRunAsApproved,
    };
    const broken = await exploreAgent(deployAgent({ preDispatch: [pinToProd] }), options);
    stats('pre-dispatch rewrite after approval', broken);
    expect(labels(broken)).toEqual(['reply deploy', 'staging call_0_0', 'ok call_0_0', 'reply done']);
    expect(broken.violations[0]!.problems).toEqual([
      'property: deploy call_0_0 ran with {"env":"prod"}, approved: {"env":"staging"}',
    ]);
    const fixed = await exploreAgent(deployAgent(), options);
    stats('without the rewriting policy', fixed);
    expect([fixed.violating, fixed.complete]).toEqual([0, true]);
  });

  it('a working tool marked progress-only: a search that ran vanishes from the history with its turn', async () => {
    const options = { replies: REPORT_REPLIES, property: whatRanStaysInHistory };
    const broken = await exploreAgent(reportAgent(true), options);
    stats('progress-only search tool', broken);
    expect(labels(broken)).toEqual(['reply search', 'ok call_0_0', 'reply report', 'ok call_1_0']);
    expect(broken.violations[0]!.problems).toEqual(['property: search call_0_0 ran but is not in the history']);
    const fixed = await exploreAgent(reportAgent(false), options);
    stats('search tool not progress-only', fixed);
    expect([fixed.violating, fixed.complete]).toEqual([0, true]);
  });

  it('a report tool marked progress-only is refused by createAgent, naming the option', () => {
    expect(() => createAgent(reportAgent(false, true))).toThrow(
      expect.objectContaining({
        code: 'InvalidOptions',
        message: expect.stringContaining('finalReport.toolName: the report tool "report" is marked progress: true'),
      }),
    );
  });
});
