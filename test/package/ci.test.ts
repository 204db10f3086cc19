import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXPECTED_SKIPS } from '../support/expected-skips.js';
import { TOOLS } from '../support/tools.js';

/** `.ci/run` proves what the README claims only if it requires every tool a suite can skip without. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');

describe('.ci/run', () => {
  it('requires every tool a suite needs, so a missing one fails instead of skipping', () => {
    const required = [...ci.matchAll(/AGENTCHART_REQUIRE_([A-Z_]+)=1/g)].map((match) => match[1]);
    expect(required.sort()).toEqual([...TOOLS].sort());
  });

  it("runs the README's test command and checks the skips of each of its two runs", () => {
    expect(ci).toMatch(/^npm test \|\| failed=1$/m);
    expect(ci).toContain('skips "$AGENTCHART_SKIPS_FILE" "node 24"');
    expect(ci).toContain('skips "$AGENTCHART_SKIPS_FILE" "node 22.13"');
  });

  it('expects only skips of test files that exist, each with its reason', () => {
    for (const skip of EXPECTED_SKIPS) {
      expect(existsSync(join(ROOT, skip.file)), skip.file).toBe(true);
      expect(readFileSync(join(ROOT, skip.file), 'utf8')).toContain(skip.test.split(' > ').at(-1));
      expect(skip.reason.length).toBeGreaterThan(20);
    }
  });

  it("names the browser in one place, so CI's AGENTCHART_CHROMIUM reaches every suite that drives Chromium", () => {
    const tracked = execFileSync('git', ['ls-files', 'test', 'visualizations', 'bench'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const pinning = tracked
      .split('\n')
      .filter((file) => file.endsWith('.ts') && file !== 'test/package/ci.test.ts')
      .filter((file) => /['"]\/usr\/bin\/chromium['"]/.test(readFileSync(join(ROOT, file), 'utf8')))
      .filter((file) => !/AGENTCHART_CHROMIUM/.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(pinning).toEqual([]);
  });
});
