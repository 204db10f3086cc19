// StrykerJS on src/runtime/ (`npm run mutation:runtime`, not in CI): the effects the machines name, driven by
// the same suites through the real agent.
import machines from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...machines,
  mutate: ['src/runtime/**/*.ts'],
  htmlReporter: { fileName: 'test/.build/mutation/runtime.html' },
  jsonReporter: { fileName: 'test/.build/mutation/runtime.json' },
  incrementalFile: 'test/.build/mutation/runtime-incremental.json',
};
