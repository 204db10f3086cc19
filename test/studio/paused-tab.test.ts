import { describe, expect, it } from 'vitest';
import type { AgentEvent } from 'agentchart';
import { checkInvariants } from 'agentchart/testing';
import { chattyAgent, STALLED_PAGE_BOUND } from './chatty.js';
import { CLIENT_BUFFER_LIMIT } from '../../src/studio/stream-client.js';
import { texts } from './support.js';
import { offlineStudio } from './offline-studio.js';

/**
 * A real tab that stops reading: Chromium freezes the page (as it does a background tab), the agent
 * runs tens of megabytes of progress updates meanwhile. The run never waits for the tab, the studio
 * holds a bounded amount for it and drops the rest, and the tab, woken, catches up on a snapshot.
 */

const offline = offlineStudio();

describe('a frozen tab', () => {
  it('never holds the run nor grows the studio without bound; woken, it shows the run as it ended', async () => {
    const agent = chattyAgent();
    await agent.ready;
    const id = offline.studio.attach(agent);
    const { page } = offline.browser;
    await page.goto(`${offline.studio.url}#session=${id}`);
    await page.waitForFunction((wanted) => (window as any).agentchartStudio?.session?.info.id === wanted, id);
    await expect.poll(() => offline.studio.stats().clients.length).toBe(1);

    // Frozen as Chromium freezes a background tab: no script runs, the stream is not read.
    const cdp = await offline.browser.context.newCDPSession(page);
    await cdp.send('Page.setWebLifecycleState', { state: 'frozen' });
    const events: AgentEvent[] = [];
    agent.events.subscribe((event) => events.push(event));
    const result = await agent.prompt('go').result;
    await new Promise((resolve) => setTimeout(resolve, 200));

    expect(result.status).toBe('completed');
    expect(checkInvariants(events, result.messages).violations).toEqual([]);
    const produced = events.reduce((sum, event) => sum + JSON.stringify(event).length, 0);
    expect(produced).toBeGreaterThan(30 * 2 ** 20);
    // The tab fell behind (what Chromium and the kernel buffered for it was not enough): the studio
    // dropped its messages rather than keep them, and held at most its bound meanwhile.
    const [frozen] = offline.studio.stats().clients;
    expect(frozen!.dropped).toBeGreaterThan(0);
    const peak = frozen!.peakBufferedBytes;
    expect(peak).toBeGreaterThan(CLIENT_BUFFER_LIMIT);
    expect(peak).toBeLessThan(STALLED_PAGE_BOUND);
    console.log(
      `[frozen tab] ${(produced / 2 ** 20).toFixed(1)} MB of events; ${frozen!.dropped} messages dropped for it; the studio held at most ${(peak / 2 ** 20).toFixed(2)} MB`,
    );

    // Woken: it drains what was buffered, gets a fresh snapshot, and shows the run as it ended.
    await cdp.send('Page.setWebLifecycleState', { state: 'active' });
    await expect
      .poll(() => texts(page, '#history .msg[data-role="assistant"] pre.text'), { timeout: 30_000, interval: 100 })
      .toContain('finished');
    await expect.poll(() => offline.studio.stats().clients[0]?.resyncs ?? 0).toBeGreaterThanOrEqual(1);
    expect(offline.studio.stats().clients[0]).toMatchObject({ behind: false });
    expect(await page.evaluate(() => (window as any).agentchartStudio.session.now.running)).toBe(false);
    expect(offline.browser.errors).toEqual([]);
    await agent.close();
  }, 120_000);
});
