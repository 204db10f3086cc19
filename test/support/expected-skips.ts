/**
 * The tests CI expects to skip, each with the run it skips in and why. `.ci/run` fails when a test
 * skips that is not here: a missing tool, a broken condition or a forgotten `.skip` shows up at once.
 */
export interface ExpectedSkip {
  file: string;
  /** The test's full name (its describe blocks and its own name, joined by " > "). */
  test: string;
  /** The `.ci/run` run it may skip in. */
  run: 'node 24' | 'node 22.13';
  reason: string;
}

export const EXPECTED_SKIPS: readonly ExpectedSkip[] = [
  {
    file: 'test/package/consumer.test.ts',
    test: 'an ESM app > gets MissingDependency from sqliteStore on a Node without node:sqlite',
    run: 'node 22.13',
    reason:
      'hiding node:sqlite needs module.registerHooks, which Node has from 22.15 on; the case runs in the Node 24 run',
  },
];
