import { z } from 'zod';
import { defineTool } from 'agentchart';
import { deferred } from '../support/harness.js';

/** A tool that needs approval; `ran` records every environment it deployed to (a tool runs once, or never). */
export const deployTool = (ran: string[] = []) =>
  defineTool({
    name: 'deploy',
    description: 'Deploy the app.',
    parameters: z.object({ env: z.string() }),
    requiresApproval: true,
    execute: ({ env }) => (ran.push(env), `deployed to ${env}`),
  });

/** A tool that works until its call is interrupted; `started` resolves once a call is under way. */
export function slowTool() {
  const started = deferred();
  const tool = defineTool({
    name: 'slow',
    description: 'Slow.',
    parameters: z.object({}),
    execute: (_args, ctx) =>
      new Promise<string>((resolve) => {
        started.resolve();
        ctx.signal.addEventListener('abort', () => resolve('stopped'));
      }),
  });
  return { tool, started };
}
