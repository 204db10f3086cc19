// StrykerJS on machines/ (`npm run mutation`, not in CI). Static mutants count: a chart's targets, guard and
// action names are evaluated once when the module loads, and ignoreStatic would leave them all unmutated.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: ['machines/**/*.ts'],
  testRunner: 'vitest',
  vitest: { configFile: 'test/mutation/vitest.config.ts', related: false },
  coverageAnalysis: 'perTest',
  ignoreStatic: false,
  concurrency: 2,
  // A mutated guard can loop an eventless transition forever (synchronously): only Stryker's timeout ends it.
  timeoutMS: 3_000,
  timeoutFactor: 1.25,
  appendPlugins: ['./test/mutation/live-reporter.mjs'],
  reporters: ['clear-text', 'progress-append-only', 'html', 'json', 'live'],
  htmlReporter: { fileName: 'test/.build/mutation/machines.html' },
  jsonReporter: { fileName: 'test/.build/mutation/machines.json' },
  tempDirName: 'test/.build/mutation/tmp',
  cleanTempDir: 'always',
  incremental: true,
  incrementalFile: 'test/.build/mutation/machines-incremental.json',
};
