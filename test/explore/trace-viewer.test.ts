import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exploreAgent, writeTrace } from 'agentchart/testing';
import { readTraceText } from '../../src/trace/viewer/model.js';
import { launchChromium } from '../support/chromium.js';
import { chromiumAvailable } from '../support/tools.js';
import { DEPLOY_REPLIES, deployAgent, policiesNeverRefused, reinjectDeclined } from './fixtures.js';

/**
 * A counterexample written by writeTrace opens in the trace viewer (headless chromium, as in
 * test/viewer): the page loads the embedded trace, shows its steps and ends on the last one.
 */

const hasChromium = chromiumAvailable('counterexample viewer test');

describe.skipIf(!hasChromium)('a counterexample in the trace viewer', () => {
  let context: BrowserContext;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentchart-counterexample-'));
    context = await launchChromium(dir);
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('opens the counterexample page and steps to the transitions that broke the invariant', async () => {
    const result = await exploreAgent(deployAgent({ postTurn: [reinjectDeclined] }), {
      replies: DEPLOY_REPLIES,
      interruptions: ['approve', 'deny'],
      property: policiesNeverRefused,
    });
    const violation = result.violations[0]!;
    const html = join(dir, 'counterexample.html');
    await writeTrace(violation, html);
    const jsonl = join(dir, 'counterexample.jsonl');
    await writeTrace(violation, jsonl);
    const model = readTraceText(await readFile(jsonl, 'utf8'));

    const page = context.pages()[0] ?? (await context.newPage());
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(pathToFileURL(html).href);
    await page.waitForSelector('body.loaded');
    expect(await page.locator('#trace-name').textContent()).toBe(violation.replay);
    expect(await page.locator('#step-label').textContent()).toMatch(new RegExp(`^step 1 / ${model.steps.length} `));
    await page.keyboard.press('End');
    expect(await page.locator('#step-label').textContent()).toMatch(
      new RegExp(`^step ${model.steps.length} / ${model.steps.length} `),
    );
    expect(errors).toEqual([]);
  }, 60_000);
});
