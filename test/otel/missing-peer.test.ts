import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HIDE = fileURLToPath(new URL('./hide-otel-api.cjs', import.meta.url));
const CHILD = fileURLToPath(new URL('./missing-peer-child.ts', import.meta.url));

describe('OpenTelemetry: @opentelemetry/api is an optional peer', () => {
  it('without it the core runs, agentchart/otel loads, and otelObserver() throws MissingDependency', () => {
    const child = spawnSync(process.execPath, ['--require', HIDE, '--import', 'tsx', CHILD], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(child.status, child.stderr).toBe(0);
    const report = JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
    expect(report).toEqual({
      core: 'completed',
      entryLoaded: true,
      error: {
        name: 'AgentError',
        code: 'MissingDependency',
        message:
          'agentchart/otel needs the optional peer dependency "@opentelemetry/api" (^1.9.0), which is not installed. ' +
          'Install it with: npm install @opentelemetry/api',
      },
    });
  });
});
