import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { SkipReporter } from './support/skip-reporter.js';

const skipsFile = process.env.AGENTCHART_SKIPS_FILE;

// Tests import the package by name, exactly as consumers do.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^agentchart\/testing$/, replacement: fileURLToPath(new URL('../src/testing.ts', import.meta.url)) },
      { find: /^agentchart\/openai$/, replacement: fileURLToPath(new URL('../src/openai.ts', import.meta.url)) },
      { find: /^agentchart\/anthropic$/, replacement: fileURLToPath(new URL('../src/anthropic.ts', import.meta.url)) },
      { find: /^agentchart\/ai-sdk-ui$/, replacement: fileURLToPath(new URL('../src/ai-sdk-ui.ts', import.meta.url)) },
      {
        find: /^agentchart\/ai-sdk-ui-client$/,
        replacement: fileURLToPath(new URL('../src/ai-sdk-ui-client.ts', import.meta.url)),
      },
      { find: /^agentchart\/ai-sdk$/, replacement: fileURLToPath(new URL('../src/ai-sdk.ts', import.meta.url)) },
      { find: /^agentchart\/sqlite$/, replacement: fileURLToPath(new URL('../src/sqlite.ts', import.meta.url)) },
      { find: /^agentchart\/restate$/, replacement: fileURLToPath(new URL('../src/restate.ts', import.meta.url)) },
      { find: /^agentchart\/postgres$/, replacement: fileURLToPath(new URL('../src/postgres.ts', import.meta.url)) },
      { find: /^agentchart\/mcp$/, replacement: fileURLToPath(new URL('../src/mcp.ts', import.meta.url)) },
      { find: /^agentchart\/inspect$/, replacement: fileURLToPath(new URL('../src/inspect.ts', import.meta.url)) },
      { find: /^agentchart\/studio$/, replacement: fileURLToPath(new URL('../src/studio.ts', import.meta.url)) },
      { find: /^agentchart\/otel$/, replacement: fileURLToPath(new URL('../src/otel.ts', import.meta.url)) },
      { find: /^agentchart\/store-kit$/, replacement: fileURLToPath(new URL('../src/store-kit.ts', import.meta.url)) },
      { find: /^agentchart\/trace$/, replacement: fileURLToPath(new URL('../src/trace.ts', import.meta.url)) },
      { find: /^agentchart\/model-kit$/, replacement: fileURLToPath(new URL('../src/model-kit.ts', import.meta.url)) },
      { find: /^agentchart$/, replacement: fileURLToPath(new URL('../src/index.ts', import.meta.url)) },
    ],
  },
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['test/**/*.test.ts'],
    // test/.build holds generated files, among them the copies of the repository a mutation run works in.
    exclude: [...configDefaults.exclude, 'test/.build/**'],
    testTimeout: 30_000,
    pool: 'forks',
    // Said explicitly: a fresh worker per test file (no module state leaks between files). Vitest
    // then also leaves out its "faster with isolate: false" hints, which are noise here.
    isolate: true,
    // `.ci/run` names a file: every skipped test is written there, and a skip it does not expect fails CI.
    ...(skipsFile ? { reporters: ['default', new SkipReporter(skipsFile)] } : {}),
  },
});
