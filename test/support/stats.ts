/**
 * Prints what a test explored (paths, interleavings, killed sessions) only when asked with
 * AGENTCHART_TEST_STATS=1, so a passing `npm test` stays quiet.
 */
export function reportStats(text: string): void {
  if (process.env.AGENTCHART_TEST_STATS) console.log(text);
}
