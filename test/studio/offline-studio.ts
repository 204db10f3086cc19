import { afterAll, beforeAll, expect } from 'vitest';
import type { Agent } from 'agentchart';
import { startStudio, type Studio } from 'agentchart/studio';
import { isLocal, openBrowser, type Browser } from './support.js';

/** What a Chromium test file works with: its browser (one page), its studio. */
export interface OfflineStudio {
  browser: Browser;
  studio: Studio;
}

/**
 * Debian's Chromium with every request that is not loopback cut, and an empty studio, for a whole
 * test file: opened before its tests, closed after them with `agents`. The file fails if the page
 * ever tried to leave loopback (with that traffic cut it still worked: it must not even try).
 */
export function offlineStudio(agents: readonly Agent[] = []): OfflineStudio {
  const opened = {} as OfflineStudio;
  beforeAll(async () => {
    opened.browser = await openBrowser();
    opened.studio = await startStudio({});
  }, 60_000);
  afterAll(async () => {
    await opened.studio?.stop();
    for (const agent of agents) await agent.close();
    const external = (opened.browser?.requests ?? []).filter((url) => !isLocal(url));
    await opened.browser?.close();
    expect(external).toEqual([]);
  });
  return opened;
}
