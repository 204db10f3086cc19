import { existsSync } from 'node:fs';

/**
 * The real parts some suites start themselves. Where a part is missing a suite skips, saying why —
 * unless `AGENTCHART_REQUIRE_<TOOL>=1` says it must be there (`.ci/run` sets all of them): then the
 * suite fails at once, so CI cannot pass while the tests that prove a README claim did not run.
 */
export const TOOLS = ['CHROMIUM', 'POSTGRES', 'RESTATE', 'MCP'] as const;
export type Tool = (typeof TOOLS)[number];

export function isRequired(tool: Tool): boolean {
  return process.env[`AGENTCHART_REQUIRE_${tool}`] === '1';
}

/**
 * `missing` is null when the tool is there. Otherwise the suite is skipped with a printed reason,
 * or, when the tool is required, this throws (the test file fails to load, naming the reason).
 */
export function availableOrSkip(tool: Tool, suite: string, missing: string | null): boolean {
  if (missing === null) return true;
  if (isRequired(tool)) throw new Error(`${suite} needs ${missing} (AGENTCHART_REQUIRE_${tool}=1)`);
  console.warn(`[${suite}] SKIPPED: ${missing}`);
  return false;
}

/** Debian's chromium by default; `AGENTCHART_CHROMIUM` names another binary (or a missing one, to test CI). */
export const CHROMIUM = process.env.AGENTCHART_CHROMIUM || '/usr/bin/chromium';

/** Whether the browser suites can run: Chromium is at `CHROMIUM`. */
export function chromiumAvailable(suite: string): boolean {
  const missing = existsSync(CHROMIUM)
    ? null
    : `Chromium at ${CHROMIUM}, which is missing (apt-get install -y --no-install-recommends chromium, what .ci/run does as root)`;
  return availableOrSkip('CHROMIUM', suite, missing);
}
