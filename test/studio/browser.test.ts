import { statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, memoryStore, type Agent, type AgentEvent } from 'agentchart';
import { checkInvariants } from 'agentchart/testing';
import { studioScreenshot } from '../../visualizations/studio-screenshot.js';
import { gate, litStates, SCREENSHOTS, slowModel, texts } from './support.js';
import { offlineStudio } from './offline-studio.js';

/**
 * The studio in Debian's Chromium against agents running in this process, with every request that
 * is not loopback cut: the charts lit live as the run moves, the reply growing as it streams, an
 * approval, a steer and an abort done on the page, through the agents' public API.
 */

const agents: Agent[] = [];
const offline = offlineStudio(agents);

/** Attaches an agent and shows its session on the page; returns the events it publishes from now on. */
async function show(agent: Agent, id: string): Promise<AgentEvent[]> {
  agents.push(agent);
  await agent.ready;
  expect(offline.studio.attach(agent)).toBe(id);
  const events: AgentEvent[] = [];
  agent.events.subscribe((event) => events.push(event));
  const { page } = offline.browser;
  await page.goto(`${offline.studio.url}#session=${id}`);
  await page.waitForFunction(
    (wanted) =>
      (window as unknown as { agentchartStudio?: { session?: { info: { id: string } } } }).agentchartStudio?.session
        ?.info.id === wanted,
    id,
  );
  return events;
}

const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 50 });

describe('the studio page, live', () => {
  it('lights the states as the run moves (USER_INPUT → ASSISTANT → TOOL_EXECUTION → RESPONSE), the tool-call actor under its turn, the reply growing', async () => {
    const preTurn = gate();
    const toolDone = gate();
    const postTurn = gate();
    const reply = 'I will read the configuration file first, then explain what it sets and why.';
    const readFile = defineTool({
      name: 'read_file',
      description: 'reads a file',
      parameters: z.object({ path: z.string() }),
      async execute({ path }, ctx) {
        await ctx.update({ percent: 50 });
        await toolDone.promise;
        return `contents of ${path}`;
      },
    });
    const agent = createAgent({
      model: slowModel([
        { text: reply, toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'config.yml' } }], pieceMs: 120 },
        { text: 'It sets the port.', pieceMs: 20 },
      ]),
      tools: [readFile],
      streaming: 'live',
      store: memoryStore(),
      sessionId: 'live-run',
      policies: {
        preTurn: [
          async ({ turnIndex }) => (turnIndex === 0 && (await preTurn.promise), { verdict: 'continue' as const }),
        ],
        postTurn: [
          async ({ turnIndex }) => (turnIndex === 0 && (await postTurn.promise), { verdict: 'continue' as const }),
        ],
      },
    });
    const events = await show(agent, 'live-run');
    const { page } = offline.browser;
    const run = agent.prompt('What does config.yml set?');

    await poll(() => litStates(page, 'turn')).toContain('turn.USER_INPUT');
    expect(await litStates(page, 'master')).toContain('master.running');
    await page.screenshot({ path: join(SCREENSHOTS, 'live-user-input.png') });

    // Every text the streaming reply shows, as the page draws it (sampled at each frame).
    await page.evaluate(() => {
      const samples: string[] = [];
      (window as unknown as { samples: string[] }).samples = samples;
      const sample = () => {
        const text = document.querySelector('#inflight .msg.streaming pre.text')?.textContent;
        if (text && text !== samples.at(-1)) samples.push(text);
        requestAnimationFrame(sample);
      };
      sample();
    });
    preTurn.open();
    await poll(() => litStates(page, 'turn')).toContain('turn.ASSISTANT');
    const samples = () => page.evaluate(() => (window as unknown as { samples: string[] }).samples);
    await poll(async () => (await samples()).length).toBeGreaterThanOrEqual(3);
    // The reply grows while it streams: each text the page showed is a longer prefix of the reply.
    const seen = await samples();
    seen.forEach((text, index) => {
      expect(reply.startsWith(text)).toBe(true);
      if (index > 0) expect(text.length).toBeGreaterThan((seen[index - 1] as string).length);
    });
    await page.screenshot({ path: join(SCREENSHOTS, 'live-streaming.png') });

    await poll(() => litStates(page, 'turn')).toContain('turn.TOOL_EXECUTION');
    await poll(() => litStates(page, 'toolCall')).toContain('toolCall.executing');
    // The tool-call actor, under its turn: a child chip in the turn's chart, the call's chip in the tool-call chart.
    await poll(() => texts(page, '[data-machine="turn"] .chip.child')).toEqual(['↳ read_file · c1: executing']);
    await poll(() => texts(page, '[data-machine="toolCall"] .chip')).toEqual(['turn 0 › read_file · c1: executing']);
    await poll(() => page.getAttribute('#inflight .tool[data-tool-call-id="c1"]', 'data-status')).toBe('running');
    await poll(() => texts(page, '#inflight .msg pre.text')).toEqual([reply]);
    await page.screenshot({ path: join(SCREENSHOTS, 'live-tool-execution.png') });
    toolDone.open();

    await poll(() => litStates(page, 'turn')).toContain('turn.RESPONSE');
    await poll(() => page.getAttribute('#history .tool[data-tool-call-id="c1"]', 'data-status')).toBe('ok');
    postTurn.open();

    const result = await run.result;
    expect(result.status).toBe('completed');
    await poll(() => texts(page, '#history .msg[data-role="assistant"] pre.text')).toEqual([
      reply,
      'It sets the port.',
    ]);
    await poll(() => page.textContent('[data-machine="master"] h2 small')).toBe('no run in progress');
    await poll(() => page.textContent('[data-counter="turns"] .value')).toBe('2');
    expect(checkInvariants(events, result.messages).violations).toEqual([]);
    expect(offline.browser.errors).toEqual([]);
  });

  it('a session chosen while the list of sessions is on its way stays chosen (the list is older than the choice)', async () => {
    const first = createAgent({ model: slowModel([]), store: memoryStore(), sessionId: 'listed-first' });
    await show(first, 'listed-first');
    const { page } = offline.browser;
    // The page asks for the list every few seconds: one answer is taken before the next agent is
    // attached and held until the page has chosen that agent's session.
    const held = gate();
    const release = gate();
    await page.route('**/api/sessions', async (route) => {
      const response = await route.fetch();
      held.open();
      await release.promise;
      await route.fulfill({ response });
    });
    try {
      await held.promise;
      const second = createAgent({ model: slowModel([]), store: memoryStore(), sessionId: 'listed-second' });
      agents.push(second);
      await second.ready;
      expect(offline.studio.attach(second)).toBe('listed-second');
      await page.evaluate(() => (location.hash = '#session=listed-second'));
      await page.waitForFunction(() => (window as any).agentchartStudio?.session?.info.id === 'listed-second');
      const listAnswered = page.waitForResponse((response) => response.url().includes('/api/sessions'));
      release.open();
      await listAnswered;
      // The stale list (without the new session) arrived after the choice: the page stays where it was sent.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await page.evaluate(() => (window as any).agentchartStudio.sessionId)).toBe('listed-second');
      expect(page.url()).toContain('#session=listed-second');
    } finally {
      release.open();
      await page.unroute('**/api/sessions');
    }
    expect(offline.browser.errors).toEqual([]);
  });
});

// Each test waits on up to three page polls of 15 s: its own limit must be above their sum, so a slow page
// fails on the poll that waited (with what it saw), not on the suite's default 30 s.
describe('the studio page, controls (the public API, receipts and versions shown)', { timeout: 60_000 }, () => {
  it('an approval decided on the page runs the tool exactly once, with the arguments edited there; a denial runs nothing', async () => {
    const ran: unknown[] = [];
    const writeFile = defineTool({
      name: 'write_file',
      description: 'writes a file',
      parameters: z.object({ path: z.string(), text: z.string() }),
      requiresApproval: true,
      execute: (args) => (ran.push(args), `wrote ${args.path}`),
    });
    // A store and no approval handler: the approval waits for resolveApproval (here, the page's buttons).
    const agent = createAgent({
      model: slowModel([
        {
          text: 'Writing the notes.',
          toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'notes.txt', text: 'draft' } }],
        },
        {
          text: 'And the secrets.',
          toolCalls: [{ id: 'w2', name: 'write_file', arguments: { path: '.env', text: 'KEY=1' } }],
        },
        { text: 'Done, without the secrets.' },
      ]),
      tools: [writeFile],
      streaming: 'live',
      store: memoryStore(),
      sessionId: 'approve',
    });
    const events = await show(agent, 'approve');
    const { page } = offline.browser;
    const run = agent.prompt('Write notes.txt, and .env too.');

    const card = page.locator('#approvals .approval[data-tool-call-id="w1"]');
    await card.waitFor();
    const pending = agent.pendingApprovals()[0];
    expect(pending).toMatchObject({ toolCallId: 'w1', toolName: 'write_file' });
    expect(await card.getAttribute('data-version')).toBe(String(pending?.version));
    expect(await card.locator('.version').textContent()).toBe(`version ${pending?.version}`);
    expect(JSON.parse(await card.locator('textarea').inputValue())).toEqual({ path: 'notes.txt', text: 'draft' });
    await page.screenshot({ path: join(SCREENSHOTS, 'approval.png') });
    await card.locator('textarea').fill(JSON.stringify({ path: 'notes.txt', text: 'edited on the page' }));
    await card.locator('button[data-action="approveWith"]').click();
    await poll(() => texts(page, '#receipts .receipt .answer')).toContain(`done (version ${pending?.version})`);

    const second = page.locator('#approvals .approval[data-tool-call-id="w2"]');
    await second.waitFor();
    await second.locator('input.approval-reason').fill('no secrets in the repository');
    await second.locator('button[data-action="deny"]').click();

    const result = await run.result;
    expect(result.status).toBe('completed');
    expect(ran).toEqual([{ path: 'notes.txt', text: 'edited on the page' }]);
    expect(result.counters).toMatchObject({ approvalsRequested: 2, approvalsDenied: 1, toolCallsExecuted: 1 });
    const ends = events.filter((event) => event.type === 'toolExecutionEnd');
    expect(ends.map((event) => [event.toolCallId, event.isError])).toEqual([
      ['w1', false],
      ['w2', true],
    ]);
    await poll(() => page.getAttribute('#history .tool[data-tool-call-id="w1"]', 'data-status')).toBe('ok');
    await poll(() => page.getAttribute('#history .tool[data-tool-call-id="w2"]', 'data-status')).toBe('error');
    expect(await page.locator('#approvals .approval').count()).toBe(0);
    expect(checkInvariants(events, result.messages).violations).toEqual([]);
  });

  it('a steer typed on the page is delivered, and its receipt is shown', async () => {
    const scanning = gate();
    const scan = defineTool({
      name: 'scan',
      description: 'scans the repository until cancelled',
      parameters: z.object({}),
      execute: (_args, ctx) =>
        new Promise<string>((resolve) => {
          scanning.open();
          ctx.signal.addEventListener('abort', () => resolve('cancelled: scan stopped'), { once: true });
        }),
    });
    const model = slowModel([
      { text: 'Scanning everything.', toolCalls: [{ id: 's1', name: 'scan', arguments: {} }] },
      { text: 'Understood: the summary only.' },
    ]);
    const agent = createAgent({
      model,
      tools: [scan],
      streaming: 'live',
      steeringGraceMs: 50,
      store: memoryStore(),
      sessionId: 'steer',
    });
    const events = await show(agent, 'steer');
    const { page } = offline.browser;
    const run = agent.prompt('Scan the repository.');
    await scanning.promise;
    await poll(() => litStates(page, 'toolCall')).toContain('toolCall.executing');
    await page.fill('#steer-text', 'Stop scanning; just summarize.');
    await page.click('#steer');
    await poll(() => texts(page, '#receipts .receipt')).toEqual([
      expect.stringContaining('steer "Stop scanning; just summarize." → delivered in turn 1'),
    ]);
    const result = await run.result;
    expect(result.status).toBe('completed');
    expect(result.counters.steeringDelivered).toBe(1);
    expect(events.find((event) => event.type === 'turnStart' && event.turnIndex === 1)).toMatchObject({
      steeringDelivered: 1,
    });
    expect(model.requests[1]?.at(-1)).toEqual({ role: 'user', content: 'Stop scanning; just summarize.' });
    await poll(() => texts(page, '#history .msg[data-role="user"] pre.text')).toEqual([
      'Scan the repository.',
      'Stop scanning; just summarize.',
    ]);
    expect(checkInvariants(events, result.messages).violations).toEqual([]);
  });

  it('abort on the page ends the run with every call answered', async () => {
    const started = gate();
    let running = 0;
    const hang = defineTool({
      name: 'hang',
      description: 'waits until cancelled',
      parameters: z.object({ n: z.number() }),
      execute: (_args, ctx) =>
        new Promise<string>((resolve) => {
          if (++running === 2) started.open();
          ctx.signal.addEventListener('abort', () => resolve('cancelled'), { once: true });
        }),
    });
    const agent = createAgent({
      model: slowModel([
        {
          text: 'Two long jobs.',
          toolCalls: [
            { id: 'h1', name: 'hang', arguments: { n: 1 } },
            { id: 'h2', name: 'hang', arguments: { n: 2 } },
          ],
        },
      ]),
      tools: [hang],
      streaming: 'live',
      store: memoryStore(),
      sessionId: 'abort',
    });
    const events = await show(agent, 'abort');
    const { page } = offline.browser;
    const run = agent.prompt('Run both jobs.');
    await started.promise;
    await poll(() => page.isEnabled('#abort')).toBe(true);
    await page.click('#abort');
    const result = await run.result;
    expect(result).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    expect(result.error?.message).toBe('aborted from the studio');
    // Every call answered: the log passes the invariants, each call has exactly one result.
    expect(checkInvariants(events, result.messages).violations).toEqual([]);
    expect(result.messages.filter((message) => message.role === 'toolResult').map((m) => m.toolCallId)).toEqual([
      'h1',
      'h2',
    ]);
    await poll(() => texts(page, '#session-badges .badge')).toContain('idle');
    await poll(() => texts(page, '#receipts .receipt .answer')).toContain('done');
    expect(await page.isEnabled('#abort')).toBe(false);
  });
});

describe('the studio picture', () => {
  it('the demo session at its approval, as docs/images/studio.png shows it (npm run screenshot:studio)', async () => {
    const path = join(SCREENSHOTS, 'studio.png');
    await studioScreenshot(path);
    expect(statSync(path).size).toBeGreaterThan(50_000);
  }, 120_000);
});
