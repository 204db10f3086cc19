import { connect as tcpConnect, type Socket } from 'node:net';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent, defineTool, type Agent } from 'agentchart';
import { startStudio, type Studio } from 'agentchart/studio';
import { scriptedModel } from 'agentchart/testing';

/**
 * A page that reads in bursts (its tab busy for tens of milliseconds at a time) keeps up with a
 * steady run: it is never let go, and gets every message. (A page that stops reading is in
 * server.test.ts and paused-tab.test.ts.)
 */

const UPDATES = 10_000;

const studios: Studio[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const studio of studios.splice(0)) await studio.stop();
  for (const agent of agents.splice(0)) await agent.close();
});

/**
 * A tool that reports 2 kB of progress 50 times every 10 ms: some 400 kB per 40 ms flush (well under
 * the limit per flush), 20 MB in all (far more than the kernel's socket buffers hold).
 */
function pacedAgent(): Agent {
  const chatty = defineTool({
    name: 'chatty',
    description: 'reports progress at a steady pace',
    parameters: z.object({}),
    async execute(_args, ctx) {
      for (let i = 0; i < UPDATES; i++) {
        await ctx.update({ i, padding: 'x'.repeat(2_000) });
        if (i % 50 === 49) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return 'done';
    },
  });
  const agent = createAgent({
    model: scriptedModel([{ toolCalls: [{ id: 'c1', name: 'chatty', arguments: {} }] }, { text: 'finished' }]),
    tools: [chatty],
  });
  agents.push(agent);
  return agent;
}

/** A raw page: its request sent and the first bytes read; the caller pauses and resumes its socket. */
async function openReader(studio: Studio): Promise<{ socket: Socket; received: () => number }> {
  const url = new URL(studio.url);
  const socket = tcpConnect(Number(url.port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let received = 0;
  socket.on('data', (chunk: Buffer) => (received += chunk.byteLength));
  socket.write(
    `GET /api/stream?id=live-1&token=${url.searchParams.get('token')} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`,
  );
  await new Promise((resolve) => socket.once('data', resolve));
  return { socket, received: () => received };
}

describe('a page that reads in bursts', () => {
  it('busy for 30 ms at a time (a janky tab), it is never let go and gets every message', async () => {
    const agent = pacedAgent();
    const studio = await startStudio({ agents: [agent] });
    studios.push(studio);
    const { socket, received } = await openReader(studio);
    socket.pause();
    // Reads for 5 ms, then not for 30: every flush interval sees it take something.
    const reading = setInterval(() => {
      socket.resume();
      setTimeout(() => socket.pause(), 5);
    }, 35);
    try {
      const result = await agent.prompt('go').result;
      expect(result.status).toBe('completed');
      await expect.poll(() => studio.stats().clients[0]?.bufferedBytes, { timeout: 10_000 }).toBe(0);
    } finally {
      clearInterval(reading);
    }
    expect(studio.stats().clients[0]).toMatchObject({ behind: false, dropped: 0, resyncs: 0 });
    expect(received()).toBeGreaterThan(UPDATES * 2_000);
    socket.destroy();
  });
});
