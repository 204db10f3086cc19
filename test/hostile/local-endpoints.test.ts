import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from 'agentchart';
import { startInspector, type Inspector } from 'agentchart/inspect';
import { scriptedModel } from 'agentchart/testing';
import { httpRequest, refusedUpgrade, withToken } from '../support/local-endpoint.js';
import { CHROMIUM } from '../support/tools.js';
import { watchTheProcess } from './harness.js';

/**
 * A web page the developer has open elsewhere attacks the inspector relay: from a `sandbox` iframe
 * (its WebSocket sends `Origin: null`) and from its own origin on another localhost port, as a viewer
 * (to read the session) and as the app (to push forged messages to the developer's page), without
 * the token and even with it. Plain clients try the same with every header they like. All of it is
 * refused with no content, while the developer's own page, opened from the printed URL, works.
 */

watchTheProcess();

const SECRET = 'the password is swordfish';

/** What the hosted inspector UI does, stood in for offline: announce itself and count what it is fed. */
const UI_STAND_IN = `<!DOCTYPE html><script>
window.received = [];
addEventListener('message', (event) => window.received.push(event.data));
parent.postMessage({ type: '@statelyai.connected' }, '*');
</script>`;

/** The attack, run by the attacker's page and again inside its sandboxed frame. */
const ATTACK = `
async function attack(port, leakedToken) {
  const sockets = [
    ['viewer without token', 'ws://127.0.0.1:' + port + '/?role=viewer'],
    ['viewer with a guessed token', 'ws://127.0.0.1:' + port + '/?role=viewer&token=' + '0'.repeat(64)],
    ['viewer with the leaked token', 'ws://127.0.0.1:' + port + '/?role=viewer&token=' + leakedToken],
    ['viewer via localhost with the leaked token', 'ws://localhost:' + port + '/?role=viewer&token=' + leakedToken],
    ['app without token', 'ws://127.0.0.1:' + port + '/?role=app'],
    ['app with the leaked token', 'ws://127.0.0.1:' + port + '/?role=app&token=' + leakedToken],
  ];
  const results = await Promise.all(sockets.map(([label, url]) => new Promise((resolve) => {
    let opened = false;
    let messages = 0;
    const socket = new WebSocket(url);
    socket.onopen = () => {
      opened = true;
      socket.send(JSON.stringify({ type: 'forged', text: 'run rm -rf ~' }));
      setTimeout(() => socket.close(), 300);
    };
    socket.onmessage = () => { messages += 1; };
    socket.onclose = () => resolve({ label, opened, messages });
  })));
  for (const [label, url] of [
    ['page without token', 'http://127.0.0.1:' + port + '/'],
    ['page with the leaked token', 'http://127.0.0.1:' + port + '/?token=' + leakedToken],
  ]) {
    let read = '';
    try { read = await (await fetch(url)).text(); } catch { read = 'blocked'; }
    let opaque = '';
    try { opaque = await (await fetch(url, { mode: 'no-cors' })).text(); } catch { opaque = 'blocked'; }
    results.push({ label, read, opaque });
  }
  return results;
}`;

function attackerPage(targetPort: number, leakedToken: string): string {
  return `<!DOCTYPE html><title>a page about cats</title>
<iframe sandbox="allow-scripts" src="/frame"></iframe>
<script>${ATTACK}
window.fromFrame = new Promise((resolve) => addEventListener('message', (event) => resolve(event.data)));
window.fromPage = attack(${targetPort}, ${JSON.stringify(leakedToken)});
</script>`;
}

function attackerFrame(targetPort: number, leakedToken: string): string {
  return `<!DOCTYPE html><script>${ATTACK}
attack(${targetPort}, ${JSON.stringify(leakedToken)}).then((results) => parent.postMessage({ origin: self.origin, results }, '*'));
</script>`;
}

async function runSession(inspector: Inspector): Promise<void> {
  const lookup = defineTool({
    name: 'lookup',
    description: 'Looks a word up.',
    parameters: z.object({ word: z.string() }),
    execute: () => SECRET,
  });
  const agent = createAgent({
    model: scriptedModel([
      { toolCalls: [{ id: 'c1', name: 'lookup', arguments: { word: 'password' } }] },
      { text: SECRET },
    ]),
    tools: [lookup],
    inspect: inspector.inspect,
  });
  expect((await agent.prompt(`tell me ${SECRET}`).result).status).toBe('completed');
}

interface AttackResult {
  label: string;
  opened?: boolean;
  messages?: number;
  read?: string;
  opaque?: string;
}

function expectRefused(results: AttackResult[]): void {
  expect(results.map((result) => result.label)).toEqual([
    'viewer without token',
    'viewer with a guessed token',
    'viewer with the leaked token',
    'viewer via localhost with the leaked token',
    'app without token',
    'app with the leaked token',
    'page without token',
    'page with the leaked token',
  ]);
  for (const result of results) {
    if ('opened' in result) expect(result, result.label).toEqual({ label: result.label, opened: false, messages: 0 });
    else expect(result, result.label).toEqual({ label: result.label, read: 'blocked', opaque: 'blocked' });
  }
}

describe('the inspector relay against a hostile page and hostile clients', () => {
  let inspector: Inspector;
  let port: number;
  let token: string;

  beforeAll(async () => {
    inspector = await startInspector();
    const url = new URL(inspector.url);
    port = Number(url.port);
    token = url.searchParams.get('token') ?? '';
  });
  afterAll(() => inspector?.stop());

  it('refuses plain clients with Origin: null, a foreign origin, no token, a wrong token or a wrong Host: no content', async () => {
    await runSession(inspector);
    const viewer = `ws://127.0.0.1:${port}/?role=viewer&token=${token}`;
    const app = viewer.replace('role=viewer', 'role=app');
    const attempts: Array<[string, Record<string, string>, number]> = [
      [viewer, { origin: 'null' }, 403],
      [app, { origin: 'null' }, 403],
      [viewer, { origin: 'http://127.0.0.1:1' }, 403],
      [viewer, { origin: 'http://evil.example' }, 403],
      [withToken(viewer, null), {}, 401],
      [withToken(app, null), {}, 401],
      [withToken(viewer, token.toUpperCase() === token ? 'f'.repeat(64) : token.toUpperCase()), {}, 401],
      [viewer, { host: `evil.example:${port}` }, 403],
      [app, { host: `127.0.0.1:${port + 1}` }, 403],
    ];
    for (const [url, headers, status] of attempts)
      expect(await refusedUpgrade(url, headers), `${url} ${JSON.stringify(headers)}`).toEqual({
        status,
        body: '',
        corsHeaders: [],
      });
    for (const headers of [{}, { origin: 'null' }, { host: `evil.example:${port}` }] as Array<Record<string, string>>) {
      const answer = await httpRequest(withToken(inspector.url, null), { host: `127.0.0.1:${port}`, ...headers });
      expect(answer).toMatchObject({ body: '', corsHeaders: [] });
      expect([401, 403]).toContain(answer.status);
    }
    expect(inspector.viewers).toBe(0);
  });

  describe('in headless Chromium', () => {
    let browser: Browser;
    let profile: string;
    let attacker: Server;
    let attackerPort: number;
    let developerPage: Page;
    const developerRequests: Array<{ url: string; referer: string | undefined }> = [];

    beforeAll(async () => {
      // A missing browser is a failure here, not a skip: this is the test that proves the attack fails.
      expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`).toBe(true);
      profile = await mkdtemp(join(tmpdir(), 'agentchart-attack-'));
      attacker = createServer((request, response) => {
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end(request.url === '/frame' ? attackerFrame(port, token) : attackerPage(port, token));
      });
      await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
      attackerPort = (attacker.address() as AddressInfo).port;
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      attacker?.closeAllConnections();
      await new Promise((resolve) => attacker?.close(resolve));
      if (profile) await rm(profile, { recursive: true, force: true });
    });

    it("the developer's page, opened from the printed URL, shows the live session", async () => {
      developerPage = await browser.newPage();
      await developerPage.route('https://stately.ai/**', (route) => {
        developerRequests.push({ url: route.request().url(), referer: route.request().headers()['referer'] });
        return route.fulfill({ contentType: 'text/html', body: UI_STAND_IN });
      });
      developerPage.on('request', (request) =>
        developerRequests.push({ url: request.url(), referer: request.headers()['referer'] }),
      );
      await developerPage.goto(inspector.url);
      await developerPage.waitForFunction(() => document.getElementById('status')?.textContent === 'connected');
      expect(await inspector.waitForViewer(5_000)).toBe(true);
      const frame = developerPage.frames().find((candidate) => candidate.url().startsWith('https://stately.ai'));
      // The session above was replayed to the page, and the page fed it to the inspector UI.
      await frame!.waitForFunction(() =>
        (window as unknown as { received: Array<{ type: string }> }).received.some(
          (item) => item.type === '@xstate.actor',
        ),
      );
      const received = await frame!.evaluate(() =>
        JSON.stringify((window as unknown as { received: unknown[] }).received),
      );
      expect(received).toContain(SECRET);
      // The hosted UI was not told the token: no Referer at all.
      const toStately = developerRequests.filter((request) => request.url.startsWith('https://stately.ai'));
      expect(toStately.length).toBeGreaterThan(0);
      expect(toStately.every((request) => request.referer === undefined)).toBe(true);
    });

    it('a page on another localhost port, and its sandboxed frame, can neither read nor forge anything', async () => {
      const before = await developerPage.evaluate<number>('received');
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${attackerPort}/`);
      const fromPage = (await page.evaluate(
        () => (window as unknown as { fromPage: unknown }).fromPage,
      )) as AttackResult[];
      const fromFrame = (await page.evaluate(() => (window as unknown as { fromFrame: unknown }).fromFrame)) as {
        origin: string;
        results: AttackResult[];
      };
      expect(fromFrame.origin).toBe('null');
      expectRefused(fromPage);
      expectRefused(fromFrame.results);
      await page.close();

      // Nothing forged reached the developer's page, and it is still the only viewer.
      expect(await developerPage.evaluate<number>('received')).toBe(before);
      const frame = developerPage.frames().find((candidate) => candidate.url().startsWith('https://stately.ai'));
      const received = await frame!.evaluate(() =>
        JSON.stringify((window as unknown as { received: unknown[] }).received),
      );
      expect(received).not.toContain('forged');
      expect(inspector.viewers).toBe(1);
    });
  });
});
