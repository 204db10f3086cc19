import { describe, expect, it } from 'vitest';
import { createAgent, memoryStore, type Agent } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { offlineStudio } from './offline-studio.js';

/** The page, in real Chromium, when the session it shows goes away under it. */

const agents: Agent[] = [];
const offline = offlineStudio(agents);

const shown = () =>
  offline.browser.page.evaluate(
    () =>
      (window as unknown as { agentchartStudio?: { session?: { info: { id: string } } } }).agentchartStudio?.session
        ?.info.id ?? null,
  );

describe('the studio page, its session gone', () => {
  it('the only agent, without a store, closes under the page: the page says so and stops asking for it', async () => {
    const passing = createAgent({ model: scriptedModel([{ text: 'a passing reply' }]) });
    agents.push(passing);
    expect(offline.studio.attach(passing)).toBe('live-1');
    const { page } = offline.browser;
    await page.goto(`${offline.studio.url}#session=live-1`);
    await expect.poll(shown, { timeout: 15_000 }).toBe('live-1');
    await passing.prompt('hi').result;
    await passing.close();
    await expect
      .poll(() => page.locator('#error').textContent(), { timeout: 15_000 })
      .toContain('There is no session "live-1" now');
    // It does not knock every half second for a session that is not there.
    const asked = () => offline.browser.requests.filter((url) => url.includes('/api/stream?id=live-1')).length;
    const before = asked();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(asked()).toBe(before);
  }, 60_000);

  it('a page opened on a session that is not there yet shows it once an agent of that name is attached', async () => {
    const { page } = offline.browser;
    await page.goto(`${offline.studio.url}#session=later`);
    await expect
      .poll(() => page.locator('#error').textContent(), { timeout: 15_000 })
      .toContain('There is no session "later" now');
    const later = createAgent({ model: scriptedModel([{ text: 'x' }]), store: memoryStore(), sessionId: 'later' });
    agents.push(later);
    await later.ready;
    offline.studio.attach(later);
    await expect.poll(shown, { timeout: 15_000 }).toBe('later');
  }, 60_000);
});
