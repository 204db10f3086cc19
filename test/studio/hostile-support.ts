import { connect as tcpConnect, type Socket } from 'node:net';
import { afterEach, beforeEach, expect } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type Agent, type SessionStore } from 'agentchart';
import { startStudio, type Studio } from 'agentchart/studio';
import { scriptedModel } from 'agentchart/testing';

/**
 * What the hostile studio tests share: the studio as real users and hostile pages misuse it —
 * malformed and oversized bodies, wrong types, unknown sessions and calls, races between pages,
 * pages that come and go, agents that close under it. Every misuse gets a typed error or a clear
 * HTTP error body; nothing takes the process down (an uncaught exception or an unhandled rejection
 * is a failure of the test that caused it).
 */

const studios: Studio[] = [];
const agents: Agent[] = [];
const crashes: unknown[] = [];
const onCrash = (error: unknown) => crashes.push(error);
/** Each test's studios and agents are stopped after it, and a crash it caused fails it. */
export function misuseHarness(): void {
  beforeEach(() => {
    process.on('uncaughtException', onCrash);
    process.on('unhandledRejection', onCrash);
  });
  afterEach(async () => {
    for (const studio of studios.splice(0)) await studio.stop();
    for (const agent of agents.splice(0)) await agent.close();
    // A crash of a timer or a callback may land a tick late.
    await new Promise((resolve) => setTimeout(resolve, 20));
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
    expect(crashes.splice(0)).toEqual([]);
  });
}

export async function studioWith(options: Parameters<typeof startStudio>[0]): Promise<Studio> {
  const studio = await startStudio(options);
  studios.push(studio);
  return studio;
}

export const keep = (agent: Agent): Agent => (agents.push(agent), agent);

export interface Answer {
  status: number;
  body: { ok?: boolean; code?: string; message?: string; [key: string]: unknown };
}

/** A POST with this raw body (JSON content type unless told otherwise). */
export async function post(
  studio: Studio,
  path: string,
  body: string,
  contentType = 'application/json',
): Promise<Answer> {
  const url = new URL(path, studio.url);
  url.searchParams.set('token', new URL(studio.url).searchParams.get('token') ?? '');
  const response = await fetch(url, { method: 'POST', body, headers: { 'content-type': contentType } });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

export const postJson = (studio: Studio, path: string, value: unknown) => post(studio, path, JSON.stringify(value));

export async function get(studio: Studio, path: string): Promise<Answer> {
  const url = new URL(path, studio.url);
  url.searchParams.set('token', new URL(studio.url).searchParams.get('token') ?? '');
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

/** A raw socket that sent its request line and headers: the test writes (or stops writing) the rest. */
export async function rawRequest(
  studio: Studio,
  head: string,
): Promise<{ socket: Socket; text: () => string; ended: Promise<void> }> {
  const url = new URL(studio.url);
  const socket = tcpConnect(Number(url.port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  socket.on('error', () => {});
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(head.replaceAll('TOKEN', url.searchParams.get('token') ?? '').replaceAll('HOST', url.host));
  return { socket, text: () => text, ended };
}

export function approvalAgent(sessionId: string, ran: unknown[], store: SessionStore = memoryStore()) {
  const writeFile = defineTool({
    name: 'write_file',
    description: 'writes a file',
    parameters: z.object({ path: z.string(), text: z.string() }),
    requiresApproval: true,
    execute: (args) => (ran.push(args), `wrote ${args.path}`),
  });
  return keep(
    createAgent({
      model: scriptedModel([
        { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'a.txt', text: 'draft' } }] },
        { text: 'written' },
      ]),
      tools: [writeFile],
      store,
      sessionId,
    }),
  );
}

/** An agent whose write waits for an approval, shown in a studio: what its pages answer. */
export async function waitingForApproval(sessionId: string, store?: SessionStore) {
  const ran: unknown[] = [];
  const agent = approvalAgent(sessionId, ran, store);
  await agent.ready;
  const studio = await studioWith({ agents: [agent] });
  const run = agent.prompt('write a.txt');
  await expect.poll(() => agent.pendingApprovals().length, { timeout: 10_000 }).toBe(1);
  return { agent, ran, studio, run, version: agent.pendingApprovals()[0]!.version };
}

/** A stored session of two runs (several steps), in a store the studio shows. */
export async function storedSession(store: SessionStore, sessionId: string): Promise<void> {
  const agent = createAgent({ model: scriptedModel([{ text: 'one' }, { text: 'two' }]), store, sessionId });
  await agent.ready;
  await agent.prompt('first').result;
  await agent.prompt('second').result;
  await agent.close();
}
