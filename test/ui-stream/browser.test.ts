import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type Message, type Model, type ModelStreamEvent } from 'agentchart';
import { chatHandler, nodeListener } from 'agentchart/ai-sdk-ui';
import { sqliteStore } from 'agentchart/sqlite';
import { checkInvariants } from 'agentchart/testing';
import { CHROMIUM } from '../support/tools.js';
import { deployTool } from './tools.js';

/**
 * A real browser on a real chat page: a small React page with `@ai-sdk/react`'s useChat (bundled
 * here by esbuild, nothing from a CDN), served with chatHandler by a node:http server on loopback,
 * driven in Debian's Chromium by playwright-core. The session is stored in SQLite: a reload shows
 * the conversation from it. A missing browser fails the test.
 */

const PAGE = fileURLToPath(new URL('./page/app.tsx', import.meta.url));
const CHAT = 'browser-chat';
const STREAMED = 'Hello from agentchart, streamed word by word to your page.';

/** A model that answers by the last user message, pacing its words in real time so the page sees them grow. */
function pacedModel(): Model {
  const words = (text: string) => text.split(/(?<= )/);
  const reply = (messages: Message[]): { text: string; call?: { id: string; name: string } } => {
    const last = messages.at(-1);
    if (last?.role === 'toolResult') return { text: last.toolName === 'deploy' ? 'Deployed to prod.' : 'Done.' };
    const asked = last?.role === 'user' ? last.content : '';
    if (asked.includes('deploy'))
      return { text: 'Deploying now.', call: { id: `deploy-${messages.length}`, name: 'deploy' } };
    if (asked.includes('wait')) return { text: 'Waiting on the job.', call: { id: 'wait-1', name: 'wait' } };
    return { text: STREAMED };
  };
  return {
    name: 'paced',
    async *stream(request, { signal }): AsyncIterable<ModelStreamEvent> {
      const { text, call } = reply(request.messages);
      yield { type: 'start', model: 'paced' };
      for (const word of words(text)) {
        await new Promise((resolve) => setTimeout(resolve, 60));
        if (signal.aborted) return;
        yield { type: 'textDelta', delta: word };
      }
      if (call) {
        const args = call.name === 'deploy' ? '{"env":"prod"}' : '{}';
        yield { type: 'toolCallStart', index: 1, id: call.id, name: call.name };
        yield { type: 'toolCallDelta', index: 1, argumentsDelta: args };
        yield { type: 'toolCallEnd', index: 1 };
      }
      yield { type: 'usage', usage: { input: 10, output: 10 } };
      yield { type: 'done', stopReason: call ? 'toolUse' : 'stop' };
    },
  };
}

const deployRuns: string[] = [];
const deploy = deployTool(deployRuns);
/** A job that runs until its call is cancelled. */
const wait = defineTool({
  name: 'wait',
  description: 'Wait for the job.',
  parameters: z.object({}),
  execute: (_args, ctx) =>
    new Promise<string>((resolve) => ctx.signal.addEventListener('abort', () => resolve('gone'))),
});

describe('a useChat page served by chatHandler, in Chromium', () => {
  let dir: string;
  let store: ReturnType<typeof sqliteStore>;
  let server: Server;
  let origin: string;
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const pageErrors: string[] = [];

  const pageMessages = () =>
    page.$$eval('#messages > li', (items) =>
      items.map((item) => ({
        role: item.getAttribute('data-role'),
        status: item.getAttribute('data-status'),
        texts: Array.from(item.querySelectorAll('.text')).map((text) => text.textContent),
        tools: Array.from(item.querySelectorAll('.tool')).map((tool) => ({
          tool: tool.getAttribute('data-tool'),
          state: tool.getAttribute('data-state'),
          result: tool.querySelector('.output, .error')?.textContent ?? null,
        })),
      })),
    );
  const send = async (text: string) => {
    await page.fill('#input', text);
    await page.click('#send');
  };
  const storedRuns = async () => (await store.loadEvents(CHAT)).filter((event) => event.type === 'agentEnd');

  beforeAll(async () => {
    // A missing browser is a failure, never a skip.
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`).toBe(true);
    const bundle = await build({
      entryPoints: [PAGE],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      jsx: 'automatic',
      define: { 'process.env.NODE_ENV': '"production"' },
      logLevel: 'warning',
    });
    const script = bundle.outputFiles[0]?.text ?? '';
    const html =
      '<!doctype html><meta charset="utf-8"><title>chat</title><div id="root"></div><script type="module" src="/app.js"></script>';

    dir = mkdtempSync(join(tmpdir(), 'agentchart-chat-ui-'));
    store = sqliteStore(join(dir, 'sessions.db'));
    const model = pacedModel();
    const api = nodeListener(
      chatHandler({
        agentFor: (chatId) =>
          createAgent({ model, tools: [deploy, wait], store, sessionId: chatId, streaming: 'live' }),
        store,
      }),
    );
    server = createServer((req, res) => {
      if (req.url?.startsWith('/api/chat')) return api(req, res);
      const [type, body] = req.url === '/app.js' ? ['text/javascript', script] : ['text/html', html];
      res.writeHead(200, { 'content-type': `${type}; charset=utf-8` }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    page = await browser.newPage();
    page.on('request', (request) => requests.push(request.url()));
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${origin}/?chat=${CHAT}`);
    await page.waitForSelector('#input');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    store?.close?.();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a typed message streams its answer onto the page', async () => {
    await send('hello');
    // Seen while it grows: part of the answer, not yet all of it.
    await page.waitForFunction(
      (full) => {
        const text = document.querySelector('li[data-role="assistant"] .text')?.textContent ?? '';
        return text.length > 0 && text.length < full.length;
      },
      STREAMED,
      { polling: 'raf', timeout: 20_000 },
    );
    await page.waitForSelector('li[data-role="assistant"][data-status="completed"]', { timeout: 20_000 });
    expect(await pageMessages()).toEqual([
      { role: 'user', status: '', texts: ['hello'], tools: [] },
      { role: 'assistant', status: 'completed', texts: [STREAMED], tools: [] },
    ]);
  });

  it('a tool that needs approval shows its approval UI; a click approves; the tool runs once and the answer follows', async () => {
    await send('please deploy');
    await page.waitForSelector('.tool[data-tool="deploy"] button.approve', { timeout: 20_000 });
    expect(deployRuns).toEqual([]);
    expect(await page.textContent('#status')).toBe('ready');

    await page.click('.tool[data-tool="deploy"] button.approve');
    await page.waitForSelector(
      'li[data-role="assistant"][data-status="completed"] .tool[data-state="output-available"]',
      {
        timeout: 20_000,
      },
    );
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'ready');
    expect(deployRuns).toEqual(['prod']);
    expect((await pageMessages()).slice(2)).toEqual([
      { role: 'user', status: '', texts: ['please deploy'], tools: [] },
      {
        role: 'assistant',
        status: 'completed',
        texts: ['Deploying now.', 'Deployed to prod.'],
        tools: [{ tool: 'deploy', state: 'output-available', result: 'deployed to prod' }],
      },
    ]);
  });

  it('a reload while an approval waits shows the turn that waits; approving on the reloaded page runs the tool once', async () => {
    await send('deploy again');
    await page.waitForSelector('.tool[data-state="approval-requested"] button.approve', { timeout: 20_000 });
    await page.reload();
    await page.waitForSelector('.tool[data-state="approval-requested"] button.approve', { timeout: 20_000 });
    expect((await pageMessages()).slice(4)).toEqual([
      { role: 'user', status: '', texts: ['deploy again'], tools: [] },
      {
        role: 'assistant',
        status: '',
        texts: ['Deploying now.'],
        tools: [{ tool: 'deploy', state: 'approval-requested', result: null }],
      },
    ]);
    expect(deployRuns).toEqual(['prod']);

    await page.click('.tool[data-state="approval-requested"] button.approve');
    await page.waitForSelector('li[data-role="assistant"][data-status="completed"]:last-child', { timeout: 20_000 });
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'ready');
    expect(deployRuns).toEqual(['prod', 'prod']);
    expect((await pageMessages()).slice(4)).toEqual([
      { role: 'user', status: '', texts: ['deploy again'], tools: [] },
      {
        role: 'assistant',
        status: 'completed',
        texts: ['Deploying now.', 'Deployed to prod.'],
        tools: [{ tool: 'deploy', state: 'output-available', result: 'deployed to prod' }],
      },
    ]);
  });

  it('"stop" during streaming ends the run aborted with every call answered', async () => {
    await send('wait for the job');
    await page.waitForSelector('.tool[data-tool="wait"][data-state="input-available"]', { timeout: 20_000 });
    await page.click('#stop');
    await expect.poll(async () => (await storedRuns()).length, { timeout: 20_000 }).toBe(4);

    const stopped = (await storedRuns()).at(-1);
    expect(stopped).toMatchObject({ status: 'aborted', endReason: 'aborted', error: { code: 'aborted' } });
    const checkpoint = await store.load(CHAT);
    expect(checkInvariants(await store.loadEvents(CHAT), checkpoint?.history)).toEqual({ ok: true, violations: [] });
    expect(checkpoint?.history.at(-1)).toMatchObject({ role: 'toolResult', toolCallId: 'wait-1', isError: true });
    expect(checkpoint?.run).toBeNull();
    expect(deployRuns).toEqual(['prod', 'prod']);
  });

  it('a reload shows the conversation from the durable session', async () => {
    await page.reload();
    await page.waitForSelector('#messages > li');
    expect(await pageMessages()).toEqual([
      { role: 'user', status: '', texts: ['hello'], tools: [] },
      { role: 'assistant', status: '', texts: [STREAMED], tools: [] },
      { role: 'user', status: '', texts: ['please deploy'], tools: [] },
      {
        role: 'assistant',
        status: '',
        texts: ['Deploying now.', 'Deployed to prod.'],
        tools: [{ tool: 'deploy', state: 'output-available', result: 'deployed to prod' }],
      },
      { role: 'user', status: '', texts: ['deploy again'], tools: [] },
      {
        role: 'assistant',
        status: '',
        texts: ['Deploying now.', 'Deployed to prod.'],
        tools: [{ tool: 'deploy', state: 'output-available', result: 'deployed to prod' }],
      },
      { role: 'user', status: '', texts: ['wait for the job'], tools: [] },
      {
        role: 'assistant',
        status: '',
        texts: ['Waiting on the job.'],
        tools: [
          {
            tool: 'wait',
            state: 'output-error',
            result: 'aborted: the run was cancelled before this tool call finished',
          },
        ],
      },
    ]);
    // Everything the page loaded came from this server.
    expect(requests.filter((url) => !url.startsWith(origin))).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
