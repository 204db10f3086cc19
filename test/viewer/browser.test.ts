import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { viewerHtml } from 'agentchart/trace';
import { agentEntries, describeValue, readTraceText, type ViewerModel } from '../../src/trace/viewer/model.js';
import { formatMs } from '../../src/trace/viewer/timeline.js';
import { buildTimeline } from '../../src/trace/viewer/timeline-model.js';
import { recordSession } from './session.js';
import { renderViewerPage } from '../../src/trace/viewer-html.js';
import { VIEWER_SCRIPT } from '../../src/trace/viewer-script.generated.js';
import { reportStats } from '../support/stats.js';
import { launchChromium } from '../support/chromium.js';
import { chromiumAvailable } from '../support/tools.js';

/**
 * The offline viewer in a real headless browser (Debian's chromium driven by playwright-core):
 * a recorded session is loaded through the file input of visualizations/viewer.html, stepped
 * through, and what is highlighted and drawn is checked; a screenshot is kept for a person.
 */

const hasChromium = chromiumAvailable('viewer browser test');
const VIEWER = pathToFileURL(fileURLToPath(new URL('../../visualizations/viewer.html', import.meta.url))).href;
export const SCREENSHOT = join(tmpdir(), 'agentchart-viewer.png');
const ACTIVE_FILL = 'rgb(255, 213, 79)';

describe.skipIf(!hasChromium)('the offline trace viewer in headless chromium', () => {
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  let tracePath: string;
  let jsonl: string;
  // The same reading of the trace, in Node: the page must show exactly what it says.
  let model: ViewerModel;
  const requests: string[] = [];
  const pageErrors: string[] = [];

  const activeIn = (machine: string) =>
    page.$$eval(`[data-machine="${machine}"] .active[data-state-id]`, (elements) =>
      elements.map((element) => element.getAttribute('data-state-id')),
    );
  const texts = (selector: string) =>
    page.$$eval(selector, (elements) => elements.map((element) => element.textContent ?? ''));

  beforeAll(async () => {
    profile = await mkdtemp(join(tmpdir(), 'agentchart-chromium-'));
    jsonl = (await recordSession()).jsonl;
    model = readTraceText(jsonl);
    tracePath = join(profile, 'session.jsonl');
    await writeFile(tracePath, jsonl);
    context = await launchChromium(profile, { viewport: { width: 1500, height: 1000 } });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('request', (request) => requests.push(request.url()));
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  it('loads a recorded trace from the file input and opens on the first step', async () => {
    await page.goto(VIEWER);
    expect(await page.locator('#step-label').textContent()).toBe('no trace loaded');
    await page.setInputFiles('#trace-file', tracePath);
    await page.waitForSelector('body.loaded');
    const steps = model.steps.length;
    const agentEvents = agentEntries(model).length;
    expect(await page.locator('#trace-name').textContent()).toBe('session.jsonl');
    expect(await page.locator('#summary').textContent()).toBe(
      `${model.actors.size} actors · ${steps} steps · 3 turns · ${agentEvents} agent events · ${formatMs(model.entries.at(-1)?.t ?? 0)}`,
    );
    expect(await page.locator('#step-label').textContent()).toBe(
      `step 1 / ${steps} · ${formatMs(model.steps[0]?.t ?? 0)}`,
    );
    expect(await page.locator('#step-title').textContent()).toBe('master · idle · active · after xstate.init');
    expect(await activeIn('master')).toEqual(['master.idle']);
    expect(await activeIn('turn')).toEqual([]);
  });

  it('steps forward to the turn running its tool calls and highlights exactly the active states', async () => {
    // The step where the last of turn 0's three tool-call actors has started executing.
    const target = model.steps.findIndex(
      (step) =>
        model.actors.get(step.sessionId)?.label === 'write_note · c3' && describeValue(step.value) === 'executing',
    );
    expect(target).toBeGreaterThan(5);
    for (let click = 0; click < target; click++) await page.click('#next');
    const step = model.steps[target];
    expect(await page.locator('#step-label').textContent()).toBe(
      `step ${target + 1} / ${model.steps.length} · ${formatMs(step?.t ?? 0)}`,
    );
    expect(await page.locator('#step-title').textContent()).toBe(
      'turn 0 › write_note · c3 (toolCall) · executing · active · after xstate.done.actor.awaitStep',
    );
    expect(await activeIn('master')).toEqual(['master.running', 'master.running.turn']);
    expect(await activeIn('turn')).toEqual(['turn.TOOL_EXECUTION', 'turn.TOOL_EXECUTION.running']);
    expect(await activeIn('toolCall')).toEqual(['toolCall.executing']);
    // In the diagram itself: the state's box is filled with the highlight colour.
    const fill = await page.$eval(
      '[data-machine="turn"] g.node.active[data-state-id="turn.TOOL_EXECUTION.running"] path',
      (path) => getComputedStyle(path).fill,
    );
    expect(fill).toBe(ACTIVE_FILL);
    // Tool-call actors are children of their turn: named under it, and listed under it in the turn's panel.
    expect(await texts('[data-machine="toolCall"] .chip')).toEqual([
      'turn 0 › lookup · c1: executing',
      'turn 0 › sum · c2: executing',
      'turn 0 › write_note · c3: executing',
    ]);
    expect(await texts('[data-machine="turn"] .chip')).toEqual([
      'turn 0: TOOL_EXECUTION.running',
      '↳ lookup · c1: executing',
      '↳ sum · c2: executing',
      '↳ write_note · c3: executing',
    ]);
    // What happened since the previous step, in order (times dropped: they follow the entries).
    const entries = (await texts('#step-entries li')).map((text) => text.replace(/^\d+ ms /, ''));
    expect(entries).toContain('event toolExecutionStart · write_note c3');
    expect(entries.at(-1)).toBe('write_note · c3 · executing (active)');
  });

  it('follows the active state: the turn diagram is framed around it, the whole chart a click away', async () => {
    const view = () =>
      page.$eval('[data-machine="turn"] svg', (svg) => {
        const [x, y, width, height] = (svg.getAttribute('viewBox') ?? '').split(/\s+/).map(Number);
        const active = svg.querySelector(
          'g.node.active[data-state-id="turn.TOOL_EXECUTION.running"]',
        ) as SVGGraphicsElement;
        const screen = svg.getBoundingClientRect();
        const box = active.getBoundingClientRect();
        return {
          x,
          y,
          width,
          height,
          visible:
            box.left >= screen.left - 1 &&
            box.right <= screen.right + 1 &&
            box.top >= screen.top - 1 &&
            box.bottom <= screen.bottom + 1,
        };
      });
    const whole = await page.$eval('template[data-chart-machine="turn"]', (template) =>
      (template.innerHTML.match(/viewBox="([^"]+)"/)?.[1] ?? '').split(/\s+/).map(Number),
    );
    const followed = await view();
    expect(followed.visible).toBe(true);
    expect(followed.width).toBeLessThan(whole[2] ?? 0);
    expect(followed.height).toBeLessThan(whole[3] ?? 0);
    await page.click('[data-machine="turn"] button.follow');
    expect(await page.locator('[data-machine="turn"] button.follow').textContent()).toBe('follow the active state');
    const all = await view();
    expect([all.width, all.height]).toEqual([whole[2], whole[3]]);
    await page.click('[data-machine="turn"] button.follow');
    expect((await view()).width).toBeLessThan(whole[2] ?? 0);
  });

  it('keeps every state label inside its box with the fonts this machine has', async () => {
    const overflowing = await page.$$eval('[data-machine] svg g.node, [data-machine] svg g.cluster', (groups) =>
      groups.flatMap((group) => {
        const shape = group.querySelector('path, polygon, ellipse') as SVGGraphicsElement | null;
        if (!shape) return [];
        const room = shape.getBBox().width;
        return Array.from(group.querySelectorAll('text'))
          .filter((text) => {
            const fitted = text.getAttribute('textLength');
            return (fitted === null ? text.getComputedTextLength() : Number(fitted)) > room;
          })
          .map((text) => `${group.getAttribute('data-state-id')}: ${text.textContent}`);
      }),
    );
    expect(overflowing).toEqual([]);
  });

  it('has a colour legend for the diagrams, the actors and the timeline', async () => {
    expect(
      await page.$$eval('#legend .item', (items) => items.map((item) => item.getAttribute('data-legend'))),
    ).toEqual([
      'active',
      'from',
      'taken',
      'final',
      'model',
      'ok',
      'error',
      'cancelled',
      'approved',
      'denied',
      'open',
      'tick',
    ]);
    const swatch = await page.$eval('#legend .swatch.active', (element) => getComputedStyle(element).backgroundColor);
    expect(swatch).toBe(ACTIVE_FILL);
  });

  it('shows the agent events as a timeline per turn, tool calls as lanes, the future faded', async () => {
    const turns = buildTimeline(agentEntries(model)).turns;
    const heading = (index: number, state: string) => {
      const turn = turns[index];
      const start = turn?.start.t ?? 0;
      const end = turn?.end?.t ?? 0;
      return `turn ${index} · ${state} · ${formatMs(start)} – ${formatMs(end)} (${formatMs(end - start)})`;
    };
    expect(await texts('.turn h3')).toEqual([heading(0, 'running'), heading(1, 'later'), heading(2, 'later')]);
    expect(await texts('.turn[data-turn="0"] .lane-label')).toEqual([
      'model',
      'lookup · c1',
      'sum · c2',
      'write_note · c3',
    ]);
    expect(
      await page.$$eval('.turn[data-turn="0"] .lane', (lanes) =>
        lanes.map((lane) =>
          Array.from(lane.querySelectorAll('.span')).map(
            (span) => `${span.getAttribute('data-kind')}:${span.getAttribute('data-status')}`,
          ),
        ),
      ),
    ).toEqual([['model:ok'], ['execution:open'], ['execution:open'], ['approval:approved', 'execution:open']]);
    expect(await page.locator('.turn[data-turn="0"] .cursor').count()).toBe(1);
    expect(await page.locator('.turn.future').count()).toBe(2);
  });

  it('walks to the end with the keyboard: every actor final, every span closed', async () => {
    const steps = model.steps.length;
    const turns = buildTimeline(agentEntries(model)).turns;
    await page.keyboard.press('End');
    expect(await page.locator('#step-label').textContent()).toBe(
      `step ${steps} / ${steps} · ${formatMs(model.steps.at(-1)?.t ?? 0)}`,
    );
    expect(await page.locator('#step-title').textContent()).toBe(
      'master · running.pollingFollowUps → ended · on xstate.done.actor.turn',
    );
    expect(await activeIn('master')).toEqual(['master.ended']);
    expect(
      await page
        .locator('[data-machine="master"] g.node.from[data-state-id="master.running.pollingFollowUps"]')
        .count(),
    ).toBe(1);
    expect(await texts('.turn h3')).toEqual(
      turns.map(
        (turn) =>
          `turn ${turn.turnIndex} · ${turn.reason} · ${formatMs(turn.start.t)} – ${formatMs(turn.end?.t ?? 0)} (${formatMs((turn.end?.t ?? 0) - turn.start.t)})`,
      ),
    );
    expect(turns.map((turn) => turn.reason)).toEqual(['toolsExecuted', 'toolsExecuted', 'complete']);
    expect(await texts('[data-machine="toolCall"] .chip')).toEqual([
      'turn 1 › broken · c4: failed (done)',
      'turn 0 › sum · c2: succeeded (done)',
      'turn 0 › lookup · c1: succeeded (done)',
      'turn 0 › write_note · c3: succeeded (done)',
    ]);
    expect(
      await page.$$eval('.turn[data-turn="1"] .span', (spans) => spans.map((span) => span.getAttribute('data-status'))),
    ).toEqual(['ok', 'error']);
    await page.keyboard.press('ArrowLeft');
    expect(await page.locator('#step-label').textContent()).toBe(
      `step ${steps - 1} / ${steps} · ${formatMs(model.steps.at(-2)?.t ?? 0)}`,
    );
    expect(await activeIn('master')).toEqual([
      'master.running',
      `master.running.${describeValue(model.steps.at(-2)?.value ?? '')
        .split('.')
        .at(-1)}`,
    ]);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    reportStats(`[viewer browser test] screenshot: ${SCREENSHOT}`);
  });

  it('opens a page with the trace embedded, with the diagrams shipped in the package', async () => {
    const embedded = join(profile, 'embedded.html');
    await writeFile(embedded, viewerHtml({ trace: jsonl, traceName: 'embedded.jsonl' }));
    await page.goto(pathToFileURL(embedded).href);
    await page.waitForSelector('body.loaded');
    expect(await page.locator('#step-label').textContent()).toBe(
      `step 1 / ${model.steps.length} · ${formatMs(model.steps[0]?.t ?? 0)}`,
    );
    await page.click('#last');
    for (const machine of ['master', 'turn', 'toolCall'])
      expect(
        await page.locator(`[data-machine="${machine}"] .drawing.svg svg g.node`).count(),
        machine,
      ).toBeGreaterThan(5);
    expect(await activeIn('master')).toEqual(['master.ended']);
    expect(await activeIn('turn')).toEqual(['turn.done']);
  });

  it('draws a machine without a diagram from the trace, and explains a file that is not a trace', async () => {
    const outlined = join(profile, 'outlined.html');
    await writeFile(outlined, renderViewerPage(VIEWER_SCRIPT, { trace: jsonl, traceName: 'outlined.jsonl' }));
    await page.goto(pathToFileURL(outlined).href);
    await page.waitForSelector('body.loaded');
    // No diagrams embedded: each machine is drawn from the outline recorded in the trace.
    await page.click('#last');
    expect(await activeIn('master')).toEqual(['master.ended']);
    const countStates = (node: { states: Array<{ states: unknown[] }> }): number =>
      node.states.reduce(
        (total, child) => total + 1 + countStates(child as { states: Array<{ states: unknown[] }> }),
        0,
      );
    const turnOutline = model.machines.get('turn');
    expect(await page.locator('[data-machine="turn"] .state[data-state-id]').count()).toBe(
      turnOutline ? countStates(turnOutline) : -1,
    );
    expect(await activeIn('turn')).toEqual(['turn.done']);

    const bad = join(profile, 'notes.txt');
    await writeFile(bad, 'hello\n');
    await page.setInputFiles('#trace-file', bad);
    await page.waitForSelector('#error:not([hidden])');
    expect(await page.locator('#error').textContent()).toBe('Could not read notes.txt: line 1: not valid JSON');
  });

  it('never touched the network and raised no page error', () => {
    expect(requests.filter((url) => !url.startsWith('file://'))).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
