import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import type { Model, ModelStreamEvent } from 'agentchart';
import { CHROMIUM } from '../support/tools.js';
import { launchChromium, LOOPBACK_ONLY } from '../support/chromium.js';

// The shared browser path (AGENTCHART_CHROMIUM may name another): a missing browser fails the suite, never skips it.
export { CHROMIUM } from '../support/tools.js';
/** Where the studio tests leave their screenshots (ignored by git). */
export const SCREENSHOTS = fileURLToPath(new URL('../.build/studio/', import.meta.url));

export interface Gate {
  promise: Promise<void>;
  open(): void;
  readonly opened: boolean;
}

/** A promise the test opens when it has seen what it wanted to see. */
export function gate(): Gate {
  let open = () => {};
  let opened = false;
  const promise = new Promise<void>((resolve) => {
    open = () => {
      opened = true;
      resolve();
    };
  });
  return {
    promise,
    open: () => open(),
    get opened() {
      return opened;
    },
  };
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(new Error('aborted'))), { once: true });
  });

export interface SlowReply {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
  /** Between two streamed pieces of text (real time). */
  pieceMs?: number;
}

/**
 * A model that streams like a real one, in real time: the text in pieces of a few characters, then
 * the tool calls; one reply per call, in order. `requests` records the messages of each call.
 */
export function slowModel(replies: SlowReply[], name = 'slow-model'): Model & { requests: unknown[][] } {
  const requests: unknown[][] = [];
  return {
    name,
    requests,
    async *stream(request, { signal }): AsyncIterable<ModelStreamEvent> {
      const reply = replies[requests.length];
      requests.push(request.messages);
      if (!reply) throw new Error(`slowModel: no reply for call ${requests.length}`);
      yield { type: 'start', model: name };
      const text = reply.text ?? '';
      for (let at = 0; at < text.length; at += 6) {
        await sleep(reply.pieceMs ?? 60, signal);
        yield { type: 'textDelta', delta: text.slice(at, at + 6) };
      }
      for (const [index, call] of (reply.toolCalls ?? []).entries()) {
        yield { type: 'toolCallStart', index, id: call.id, name: call.name };
        yield { type: 'toolCallDelta', index, argumentsDelta: JSON.stringify(call.arguments) };
        yield { type: 'toolCallEnd', index };
      }
      yield { type: 'usage', usage: { input: 100 + requests.length, output: 20 } };
      yield { type: 'done', stopReason: (reply.toolCalls?.length ?? 0) > 0 ? 'toolUse' : 'stop' };
    },
  };
}

/** Loopback and inline data only: anything else is a request the page must never make. */
export const isLocal = (url: string) => /^(data:|about:blank|http:\/\/(127\.0\.0\.1|localhost)[:/])/.test(url);

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Every URL the browser requested. */
  requests: string[];
  errors: string[];
  close(): Promise<void>;
}

/**
 * Chromium with every non-loopback request cut twice: names other than loopback do not resolve, and
 * the context aborts any request that is not loopback or data: (and logs it, so a test can fail on it).
 */
export async function openBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install it (apt-get install -y chromium); the studio tests need it`);
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  const profile = await mkdtemp(join(tmpdir(), 'agentchart-studio-chromium-'));
  const context = await launchChromium(profile, { viewport: { width: 1600, height: 1000 }, args: [LOOPBACK_ONLY] });
  const requests: string[] = [];
  const errors: string[] = [];
  context.on('request', (request) => requests.push(request.url()));
  await context.route('**/*', (route) => (isLocal(route.request().url()) ? route.continue() : route.abort()));
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (error) => errors.push(error.message));
  return {
    context,
    page,
    requests,
    errors,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** The state ids lit in a chart of the page. */
export const litStates = (page: Page, machine: string) =>
  page.$$eval(`[data-machine="${machine}"] .active[data-state-id]`, (elements) =>
    elements.map((element) => element.getAttribute('data-state-id') ?? ''),
  );

export const texts = (page: Page, selector: string) =>
  page.$$eval(selector, (elements) => elements.map((element) => element.textContent ?? ''));
