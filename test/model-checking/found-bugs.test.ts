import { describe, expect, it } from 'vitest';
import { explore } from './harness/explore.js';
import { Checks, checkEveryPath } from './harness/paths.js';
import { masterMonitor } from './master-monitor.js';
import { masterEnvironment, provideMaster, session, type MasterConfig } from './master-model.js';
import { REPORT_TOOL } from './turn-fixtures.js';
import { turnMonitor } from './turn-monitor.js';
import { NO_FEATURES, provideTurn, turnEnvironment, turnInput, type TurnConfig } from './turn-model.js';

/**
 * Regression checks for lifecycle bugs the model checks found in the machines (all fixed).
 * A failure lists its first counterexample paths.
 */

const plain: TurnConfig = {
  name: 'plain',
  approvals: false,
  partition: 'valid',
  replies: ['text', 'oneCall', 'rateLimited', 'contextOverflow'],
};

function checkMaster(config: MasterConfig): Checks {
  const graph = explore(provideMaster(), masterEnvironment(config), { input: config.input, limit: 10_000 });
  const checks = new Checks(3);
  checkEveryPath(graph, masterMonitor(config.input), checks);
  return checks;
}

describe('lifecycle bugs found by model checking stay fixed', () => {
  it('turn: a reply cut by an error after a complete tool call is committed without its tool results', () => {
    // REPLIES.cutAfterCall / rejectedAfterCall: the accumulator keeps the complete tool-call block
    // of a stream that then failed; when no recovery is left, the reply goes (`replyFailed`) to
    // RESPONSE, which once happened without settleUnfinishedCalls: commitTurn and turnEnd carried a call with no result.
    const config: TurnConfig = { ...plain, replies: ['cutAfterCall', 'rejectedAfterCall'] };
    const input = turnInput({ ...NO_FEATURES, postTurnPolicies: true }, 'freshLastChance');
    const graph = explore(provideTurn(), turnEnvironment(config), { input, limit: 10_000 });
    const checks = new Checks(3);
    checkEveryPath(graph, turnMonitor(input), checks);
    expect(checks.violations).toEqual([]);
  });

  it('master: model calls exceed maxTurns × maxAttempts after an overflow recovery', () => {
    // Recoveries are bounded by `withinCallBudget`, fresh turns are not: a turn that used an extra
    // call (overflow recovery, retries, fallback) leaves later turns nothing to stay within the budget.
    const checks = checkMaster({
      name: 'budget',
      input: session({ maxAttempts: 1 }),
      turn: plain,
      maxSteers: 0,
      maxFollowUps: 0,
    });
    expect(checks.violations).toEqual([]);
  });

  it('master: model calls exceed maxTurns × maxAttempts with a fallback model', () => {
    const checks = checkMaster({
      name: 'budget+fallback',
      input: session({ modelCount: 2 }),
      turn: { ...plain, replies: ['text', 'oneCall', 'rateLimited'] },
      maxSteers: 0,
      maxFollowUps: 0,
    });
    expect(checks.violations).toEqual([]);
  });

  it('master: a follow-up taken after the last allowed turn is lost', () => {
    // pollingFollowUps moves the follow-up into `pending`, then preTurn ends the run on maxTurns:
    // the message is neither delivered nor in the output queues (its receipt never settles).
    const checks = checkMaster({
      name: 'follow-up at max turns',
      input: session({ maxAttempts: 1 }),
      turn: { ...plain, replies: ['text', 'oneCall'] },
      maxSteers: 0,
      maxFollowUps: 1,
    });
    expect(checks.violations).toEqual([]);
  });

  it('master: report mode retries a failed turn as a new turn beyond maxTurns', () => {
    // judgingReport → turn (retryFailedTurn) starts a fresh turn (new turnIndex, new turnStart): it
    // once did so without the turnBudgetSpent check that preTurn does.
    const checks = checkMaster({
      name: 'report retry at max turns',
      input: session({ reportToolName: REPORT_TOOL }),
      turn: { ...plain, replies: ['text', 'oneCall', 'report'] },
      maxSteers: 0,
      maxFollowUps: 0,
    });
    expect(checks.violations).toEqual([]);
  });
});
