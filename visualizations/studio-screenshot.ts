import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { runDemo, SCRIPTED_MODEL_NAME } from '../src/demo/run-demo.js';
import { DEMO_SCRIPT } from '../src/demo/script.js';
import { attachToStudio, DEMO_SESSION, startDemoStudio } from '../src/demo/studio.js';
import { scriptedModel, type Clock } from '../src/testing.js';

/**
 * The studio's picture: the demo session in the studio, at the moment its write waits for an
 * approval on the page (the first turn's tools done, their progress and results in the conversation
 * and the timeline, the turn's chart lit on the approval). `npm run screenshot:studio` writes
 * docs/images/studio.png; the studio tests take the same picture into test/.build/studio/.
 */

export const STUDIO_IMAGE = fileURLToPath(new URL('../docs/images/studio.png', import.meta.url));
const CHROMIUM = process.env.AGENTCHART_CHROMIUM || '/usr/bin/chromium';

const clock: Clock = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};

export async function studioScreenshot(path: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const demo = await startDemoStudio({ studio: true, port: 0 }, clock);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
    await page.goto(`${demo.studio.url}#session=${DEMO_SESSION}`);
    const run = runDemo({
      write: () => {},
      clock: demo.clock,
      model: demo.pace(scriptedModel(DEMO_SCRIPT, { name: SCRIPTED_MODEL_NAME, clock: demo.clock })),
      studio: {
        store: demo.store,
        sessionId: DEMO_SESSION,
        approvals: 'page',
        onAgent: (agent) => attachToStudio(demo.studio, agent),
      },
    });
    const card = page.locator('#approvals .approval');
    await card.waitFor({ timeout: 60_000 });
    // Let the charts settle on the waiting approval and the labels be fitted.
    await page.waitForTimeout(600);
    await page.screenshot({ path });
    await card.locator('button[data-action="approve"]').click();
    const outcome = await run;
    if (outcome.result.status !== 'completed' || outcome.violations.length > 0)
      throw new Error(
        `the demo session did not complete cleanly: ${outcome.result.status} ${outcome.violations.join('; ')}`,
      );
  } finally {
    await browser.close();
    await demo.studio.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await studioScreenshot(STUDIO_IMAGE);
  console.log(STUDIO_IMAGE);
}
