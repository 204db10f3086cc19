import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM } from '../support/tools.js';

/**
 * An app using the installed package writes two viewer pages: a recorded run (`viewerHtml({ trace })`)
 * and a counterexample of the model checker (`writeTrace(violation, 'counterexample.html')`). Neither
 * passes any diagram: the ones shipped in the package must be there.
 */
export const VIEWER_APP = `import { writeFile } from 'node:fs/promises';
import { createAgent, defineTool } from 'agentchart';
import { createTraceRecorder, viewerHtml } from 'agentchart/trace';
import { exploreAgent, scriptedModel, writeTrace } from 'agentchart/testing';
import { z } from 'zod';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a term up.',
  parameters: z.object({ term: z.string() }),
  execute: ({ term }) => term + ': forty-two',
});
const runTests = defineTool({
  name: 'run_tests',
  description: 'Runs the tests.',
  parameters: z.object({}),
  async execute(_, ctx) {
    for (const percent of [25, 50, 75]) await ctx.update({ percent });
    return '30 passed';
  },
});
const trace = createTraceRecorder();
const agent = createAgent({
  model: scriptedModel([
    { toolCalls: [{ name: 'lookup', arguments: { term: 'answer' } }, { name: 'run_tests', arguments: {} }] },
    { text: 'It is 42, and the tests pass.' },
  ]),
  tools: [lookup, runTests],
  inspect: trace.inspect,
});
agent.events.subscribe(trace.events);
await agent.prompt('What is the answer?').result;
await writeFile('run.html', viewerHtml({ trace: trace.toJSONL(), traceName: 'run.jsonl' }));

const explored = await exploreAgent(
  { model: scriptedModel([]), tools: [lookup] },
  {
    replies: { lookup: { toolCalls: [{ name: 'lookup', arguments: { term: 'x' } }] }, done: { text: 'Done.' } },
    property: (log) => !log.some((event) => event.type === 'toolExecutionEnd') || 'lookup ran',
  },
);
await writeTrace(explored.violations[0], 'counterexample.html');
console.log('written');
`;

export interface ViewerPageSeen {
  /** Drawn diagram nodes per machine panel. */
  diagramNodes: Record<string, number>;
  /** Active states per machine at the last step. */
  activeAtEnd: Record<string, string[]>;
  /** Progress-tick marks drawn outside a timeline track (the stray mark at the top-left of a page). */
  strayTicks: number;
  requests: string[];
  pageErrors: string[];
}

/** Opens a viewer page in headless Chromium, steps to its end and takes a screenshot. A missing browser fails. */
export async function viewInChromium(page: string, screenshot: string): Promise<ViewerPageSeen> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install it (\`apt-get install -y --no-install-recommends chromium\`)`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const tab = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const requests: string[] = [];
    const pageErrors: string[] = [];
    tab.on('request', (request) => requests.push(request.url()));
    tab.on('pageerror', (error) => pageErrors.push(error.message));
    await tab.goto(pathToFileURL(page).href);
    await tab.waitForSelector('body.loaded');
    await tab.click('#last');
    const machines = ['master', 'turn', 'toolCall'];
    const diagramNodes: Record<string, number> = {};
    const activeAtEnd: Record<string, string[]> = {};
    for (const machine of machines) {
      diagramNodes[machine] = await tab.locator(`[data-machine="${machine}"] .drawing.svg svg g.node`).count();
      activeAtEnd[machine] = await tab.$$eval(`[data-machine="${machine}"] .active[data-state-id]`, (elements) =>
        elements.map((element) => element.getAttribute('data-state-id') ?? ''),
      );
    }
    const strayTicks = await tab.$$eval(
      '.tick',
      (marks) =>
        marks.filter((mark) => !mark.closest('.track') && getComputedStyle(mark).position === 'absolute').length,
    );
    // The picture: the whole charts at the first step where a tool call runs (the turn in TOOL_EXECUTION).
    await tab.click('#first');
    for (let step = 0; step < 500; step++) {
      if ((await tab.locator('[data-machine="toolCall"] .active[data-state-id="toolCall.executing"]').count()) > 0)
        break;
      await tab.click('#next');
    }
    for (const toggle of await tab.locator('button.follow').all()) await toggle.click();
    await tab.screenshot({ path: screenshot, fullPage: true });
    return { diagramNodes, activeAtEnd, strayTicks, requests, pageErrors };
  } finally {
    await browser.close();
  }
}
