import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from 'agentchart';
import { startInspector } from 'agentchart/inspect';
import { scriptedModel } from 'agentchart/testing';
import { connect, httpRequest, refusedUpgrade } from '../support/local-endpoint.js';

const get = async (url: string, host: string) => {
  const { status, body } = await httpRequest(url, { host });
  return { status, body };
};

describe('startInspector: the XState inspector relay on loopback', () => {
  it('serves its page on 127.0.0.1 only, relays a session to the page, replays it to a late page, and stops', async () => {
    const inspector = await startInspector();
    const url = new URL(inspector.url);
    expect(url.hostname).toBe('127.0.0.1');
    const port = Number(url.port);
    const token = url.searchParams.get('token') ?? '';
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const viewerUrl = `ws://127.0.0.1:${port}/?role=viewer&token=${token}`;

    const page = await get(inspector.url, `127.0.0.1:${port}`);
    expect(page.status).toBe(200);
    // The page passes the token of its own URL on to its socket, and sends no Referer to the hosted UI.
    expect(page.body).toContain(
      "socketUrl.searchParams.set('token', new URLSearchParams(location.search).get('token')",
    );
    expect(page.body).toContain('<meta name="referrer" content="no-referrer">');
    expect(page.body).toContain('<iframe id="inspector" src="https://stately.ai/inspect">');
    // DNS rebinding: a request for another host name is refused.
    expect(await get(inspector.url, `attacker.example:${port}`)).toEqual({ status: 403, body: '' });
    expect(await refusedUpgrade(viewerUrl, { origin: 'http://attacker.example' })).toMatchObject({ status: 403 });
    // A page may only be a viewer: the app side is taken only from a client that is not a browser.
    expect(await refusedUpgrade(viewerUrl.replace('role=viewer', 'role=app'), { origin: url.origin })).toMatchObject({
      status: 403,
    });

    const early = await connect(viewerUrl, { origin: url.origin });
    expect(await inspector.waitForViewer(1_000)).toBe(true);
    const lookup = defineTool({
      name: 'lookup',
      description: 'Looks a word up.',
      parameters: z.object({ word: z.string() }),
      execute: ({ word }) => `${word}: found`,
    });
    const agent = createAgent({
      model: scriptedModel([
        {
          toolCalls: [
            { id: 'c1', name: 'lookup', arguments: { word: 'a' } },
            { id: 'c2', name: 'lookup', arguments: { word: 'b' } },
          ],
        },
        { text: 'hi' },
      ]),
      tools: [lookup],
      inspect: inspector.inspect,
    });
    expect((await agent.prompt('hello').result).status).toBe('completed');

    const waitFor = async (check: () => boolean) => {
      for (let attempt = 0; attempt < 100 && !check(); attempt++)
        await new Promise((resolve) => setTimeout(resolve, 20));
    };
    const masterEnded = () =>
      early.messages.some(
        (message) => message.type === '@xstate.snapshot' && (message.snapshot as { value?: unknown }).value === 'ended',
      );
    await waitFor(masterEnded);
    expect(masterEnded()).toBe(true);
    expect(new Set(early.messages.map((message) => message.type))).toEqual(
      new Set(['@xstate.actor', '@xstate.event', '@xstate.snapshot']),
    );

    // The relayed stream links every actor to its parent: turns to the master, tool calls to their turn.
    const actors = early.messages.filter((message) => message.type === '@xstate.actor') as unknown as Array<{
      name: string;
      sessionId: string;
      parentId?: string;
    }>;
    const sessionOf = (name: string) => actors.filter((actor) => actor.name === name).map((actor) => actor.sessionId);
    const [master] = sessionOf('master');
    const turns = sessionOf('turn');
    expect(turns).toHaveLength(2);
    expect(actors.filter((actor) => actor.name === 'turn').map((actor) => actor.parentId)).toEqual([master, master]);
    // A tool-call actor is named after its call's place in the batch.
    expect(
      actors.filter((actor) => actor.name.startsWith('call.')).map((actor) => [actor.name, actor.parentId]),
    ).toEqual([
      ['call.0', turns[0]],
      ['call.1', turns[0]],
    ]);

    const late = await connect(viewerUrl);
    await waitFor(() => late.messages.length >= early.messages.length);
    expect(late.messages).toEqual(early.messages);

    await inspector.stop();
    await Promise.all([early.closed, late.closed]);
    expect(inspector.viewers).toBe(0);
    await expect(get(inspector.url, `127.0.0.1:${port}`)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('reports a port it cannot listen on', async () => {
    const first = await startInspector();
    const port = Number(new URL(first.url).port);
    await expect(startInspector({ port })).rejects.toThrow(
      `The inspector could not listen on 127.0.0.1:${port}: listen EADDRINUSE`,
    );
    await first.stop();
  });
});
