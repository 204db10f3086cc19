import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, memoryStore, type Agent } from 'agentchart';
import { startStudio, type Studio } from 'agentchart/studio';
import { scriptedModel } from 'agentchart/testing';
import { isLocal, openBrowser, type Browser } from './support.js';

/** The page, in real Chromium, when the session it shows goes away under it. */

let browser: Browser;
let studio: Studio;
const agents: Agent[] = [];

beforeAll(async () => {
  browser = await openBrowser();
  studio = await startStudio({});
}, 60_000);

afterAll(async () => {
  await studio?.stop();
  for (const agent of agents) await agent.close();
  const external = (browser?.requests ?? []).filter((url) => !isLocal(url));
  await browser?.close();
  expect(external).toEqual([]);
});

const shown = () =>
  browser.page.evaluate(
    () =>
      (window as unknown as { agentchartStudio?: { session?: { info: { id: string } } } }).agentchartStudio?.session
        ?.info.id ?? null,
  );

describe('the studio page, its session gone', () => {
  it('the only agent, without a store, closes under the page: the page says so and stops asking for it', async () => {
    const passing = createAgent({ model: scriptedModel([{ text: 'a passing reply' }]) });
    agents.push(passing);
    expect(studio.attach(passing)).toBe('live-1');
    const { page } = browser;
    await page.goto(`${studio.url}#session=live-1`);
    await expect.poll(shown, { timeout: 15_000 }).toBe('live-1');
    await passing.prompt('hi').result;
    await passing.close();
    await expect
      .poll(() => page.locator('#error').textContent(), { timeout: 15_000 })
      .toContain('There is no session "live-1" now');
    // It does not knock every half second for a session that is not there.
    const asked = () => browser.requests.filter((url) => url.includes('/api/stream?id=live-1')).length;
    const before = asked();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(asked()).toBe(before);
  }, 60_000);

  it('a page opened on a session that is not there yet shows it once an agent of that name is attached', async () => {
    const { page } = browser;
    await page.goto(`${studio.url}#session=later`);
    await expect
      .poll(() => page.locator('#error').textContent(), { timeout: 15_000 })
      .toContain('There is no session "later" now');
    const later = createAgent({ model: scriptedModel([{ text: 'x' }]), store: memoryStore(), sessionId: 'later' });
    agents.push(later);
    await later.ready;
    studio.attach(later);
    await expect.poll(shown, { timeout: 15_000 }).toBe('later');
  }, 60_000);
});
