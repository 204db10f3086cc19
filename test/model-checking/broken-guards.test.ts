import { describe, expect, it } from 'vitest';
import type { ModelReply } from '../../machines/turn.types.js';
import { explore } from './harness/explore.js';
import { Checks, checkAbortAlwaysEnds, checkEveryPath } from './harness/paths.js';
import { masterMonitor } from './master-monitor.js';
import { masterEnvironment, provideMaster, session, type MasterConfig, type MasterWalk } from './master-model.js';
import { endsAborted, turnMonitor } from './turn-monitor.js';
import {
  NO_FEATURES,
  provideTurn,
  turnEnvironment,
  turnInput,
  type AttemptName,
  type TurnConfig,
} from './turn-model.js';

/**
 * The checks must catch a wrong guard: each test breaks one guard of a machine with
 * `.provide({ guards })` and expects the exact invariant that guard protects to be reported.
 */

const plain: TurnConfig = {
  name: 'plain',
  approvals: false,
  partition: 'valid',
  replies: ['text', 'oneCall', 'rateLimited', 'authFailed'],
};

function checkBrokenTurn(
  guards: Parameters<ReturnType<typeof provideTurn>['provide']>[0]['guards'],
  attempt: AttemptName,
): ReadonlySet<string> {
  const input = turnInput(NO_FEATURES, attempt);
  const graph = explore(provideTurn().provide({ guards }), turnEnvironment(plain), { input, limit: 10_000 });
  const checks = new Checks();
  checkEveryPath(graph, turnMonitor(input), checks);
  checkAbortAlwaysEnds(graph, 'ABORT', endsAborted, checks);
  return checks.broken;
}

describe('model checking catches a broken guard', () => {
  it('turn: a retry deferred to the master although its attempts are spent', () => {
    const invariants = checkBrokenTurn(
      {
        errorIsRetryable: ({ event }) => (event as unknown as { output: ModelReply }).output.error?.retryable === true,
      },
      'freshLastChance',
    );
    expect([...invariants]).toEqual(['deferred only when the master promised that recovery']);
  });

  it('turn: an aborted stream that is not recognised as aborted', () => {
    // Neither the ABORT that came during the stream nor the reply's own mark is taken as an abort.
    const invariants = checkBrokenTurn(
      { abortArrivedWhileStreaming: () => false, replyWasAborted: () => false },
      'freshWithRecovery',
    );
    expect(invariants).toContain('nothing starts after ABORT');
    expect(invariants).toContain('ABORT ⇒ the turn ends aborted');
  });

  it('master: an aborted turn that does not end the session', () => {
    const config: MasterConfig = {
      name: 'broken turnWasAborted',
      input: session({ maxAttempts: 1 }),
      turn: plain,
      maxSteers: 0,
      maxFollowUps: 0,
    };
    // Both guards: the master's own record of the abort (abortWasRequested) would otherwise catch it.
    const master = provideMaster().provide({ guards: { turnWasAborted: () => false, abortWasRequested: () => false } });
    const graph = explore(master, masterEnvironment(config), { input: config.input, limit: 10_000 });
    const checks = new Checks();
    checkEveryPath(graph, masterMonitor(config.input), checks);
    checkAbortAlwaysEnds(
      graph,
      'ABORT',
      (walk: MasterWalk) => (walk.snapshot.output?.status === 'aborted' ? null : 'not aborted'),
      checks,
    );
    expect(checks.broken).toContain('ABORT (and no STOP) ⇔ the session ends aborted');
    expect(checks.broken).toContain('ABORT from {"running":"turn"} reaches a final state');
  });
});
