import { z } from 'zod';
import { defineTool } from 'agentchart';

/** A tool that needs approval; `ran` records every environment it deployed to (a tool runs once, or never). */
export const deployTool = (ran: string[] = []) =>
  defineTool({
    name: 'deploy',
    description: 'Deploy the app.',
    parameters: z.object({ env: z.string() }),
    requiresApproval: true,
    execute: ({ env }) => (ran.push(env), `deployed to ${env}`),
  });
