import { it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
it('dump', async () => {
  const read = defineTool({ name: 'read', description: 'r', parameters: z.object({ path: z.string() }), execute: async () => 'x' });
  const model = scriptedModel([{ text: 'Reading', toolCalls: [{ id: 'r1', name: 'read', arguments: { path: 'aaaaaaa' } }], stall: true }]);
  const agent = createAgent({ model, tools: [read], streaming: 'live' });
  const run = agent.prompt('go');
  let n = 0;
  run.events.subscribe((e) => { console.log(JSON.stringify(e).slice(0, 300)); if (e.type === 'messageUpdate' && e.delta.type === 'toolCall' && ++n === 2) agent.abort(); });
  await run.result;
});
