import { z } from 'zod';
import { createAgent, defineTool, type Agent } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { SNAPSHOT_EVENT_BYTES } from '../../src/studio/live-session.js';
import { MAX_MESSAGE } from '../../src/studio/wire.js';
import { CLIENT_BUFFER_LIMIT } from '../../src/studio/stream-client.js';

/** For the tests of a page that stops reading: a run that sends far more than any buffer holds. */

/** Progress updates of about 2 kB each in one tool call: 20,000 of them make some 40 MB of events. */
export function chattyAgent(updates = 20_000): Agent {
  const chatty = defineTool({
    name: 'chatty',
    description: 'reports a lot of progress',
    parameters: z.object({}),
    async execute(_args, ctx) {
      for (let i = 0; i < updates; i++) await ctx.update({ i, padding: 'x'.repeat(2_000) });
      return 'done';
    },
  });
  return createAgent({
    model: scriptedModel([{ toolCalls: [{ id: 'c1', name: 'chatty', arguments: {} }] }, { text: 'finished' }]),
    tools: [chatty],
  });
}

/**
 * The most the studio may hold for a page that stopped reading: the limit, the message written before
 * the limit was seen, and one snapshot (once the kernel took what was buffered, the page is sent a
 * snapshot instead of the backlog) — whatever the run produced.
 */
export const STALLED_PAGE_BOUND = CLIENT_BUFFER_LIMIT + 2 * MAX_MESSAGE + SNAPSHOT_EVENT_BYTES + 2 ** 16;
