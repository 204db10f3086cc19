import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM } from './tools.js';

/** Flags every browser suite starts Chromium with: headless, no sandbox (root in CI), nothing phoned home. */
const QUIET_HEADLESS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Makes names other than loopback unresolvable, for pages that must work with the network off. */
export const LOOPBACK_ONLY = '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost';

/** The shared Chromium (`CHROMIUM`) with a profile of its own under `dir`. */
export function launchChromium(
  dir: string,
  options: { viewport?: { width: number; height: number }; args?: string[] } = {},
): Promise<BrowserContext> {
  return chromium.launchPersistentContext(join(dir, 'user-data'), {
    executablePath: CHROMIUM,
    headless: true,
    args: [...QUIET_HEADLESS, ...(options.args ?? [])],
    ...(options.viewport ? { viewport: options.viewport } : {}),
  });
}
