import { z } from 'zod';
import { defineTool, type AgentOptions, type PostTurnPolicy, type PreDispatchPolicy } from 'agentchart';
import { exploreAgent, scriptedModel, type ExploreOptions, type Replies } from 'agentchart/testing';

/**
 * The "typical agent" of the model-checking issue: five tools (one behind an approval) and two
 * policies, explored at the bounds the README recommends.
 */

const tool = (name: string, requiresApproval = false) =>
  defineTool({
    name,
    description: `The ${name} tool.`,
    parameters: z.object({ path: z.string().optional() }),
    requiresApproval,
    execute: ({ path }) => `${name} ${path ?? ''} done`,
  });

const TOOLS = [tool('read_file'), tool('search'), tool('write_file'), tool('run_tests'), tool('deploy', true)];

/** Writes outside src/ are skipped. */
const protectSecrets: PreDispatchPolicy = ({ toolCall }) =>
  toolCall.name === 'write_file' && !String(toolCall.arguments.path ?? '').startsWith('src/')
    ? { verdict: 'skip', reason: 'outside src/' }
    : { verdict: 'continue' };
/** A failed tool gets a note to the model. */
const noteFailures: PostTurnPolicy = ({ toolResults }) =>
  toolResults.some((result) => result.isError)
    ? { verdict: 'inject', messages: ['A tool failed: check its result before going on.'] }
    : { verdict: 'continue' };

export const typicalAgent = (): AgentOptions => ({
  model: scriptedModel([]),
  tools: TOOLS,
  policies: { preDispatch: [protectSecrets], postTurn: [noteFailures] },
});

/** One reply per tool, and a final answer. */
export const TYPICAL_REPLIES: Replies = {
  read: { toolCalls: [{ name: 'read_file', arguments: { path: 'src/a.ts' } }] },
  search: { toolCalls: [{ name: 'search', arguments: {} }] },
  write: { toolCalls: [{ name: 'write_file', arguments: { path: 'src/a.ts' } }] },
  test: { toolCalls: [{ name: 'run_tests', arguments: {} }] },
  deploy: { toolCalls: [{ name: 'deploy', arguments: {} }] },
  done: { text: 'Done.' },
};

export const BOUNDS: Array<{ name: string; options: Omit<ExploreOptions, 'replies'> }> = [
  { name: 'approve/deny, 3 turns', options: { interruptions: ['approve', 'deny'] } },
  {
    name: '+ steer, abort; 2 turns, 1 interruption',
    options: { interruptions: ['approve', 'deny', 'steer', 'abort'], maxTurns: 2 },
  },
  {
    name: '+ steer, abort; 3 turns, 1 interruption (defaults)',
    options: { interruptions: ['approve', 'deny', 'steer', 'abort'] },
  },
  {
    name: '+ follow-up, tool and model errors; 3 turns, 1 interruption',
    options: { interruptions: ['approve', 'deny', 'steer', 'followUp', 'abort', 'toolError', 'modelError'] },
  },
  {
    name: '+ crash (on a store); 3 turns, 1 interruption',
    options: { interruptions: ['approve', 'deny', 'steer', 'abort', 'crash'] },
  },
  {
    name: 'every interruption; 2 turns, 1 interruption',
    options: {
      interruptions: ['approve', 'deny', 'steer', 'followUp', 'abort', 'toolError', 'modelError', 'crash'],
      maxTurns: 2,
    },
  },
  {
    name: 'steer, abort; 2 turns, 2 interruptions',
    options: { interruptions: ['approve', 'deny', 'steer', 'abort'], maxTurns: 2, maxInterruptions: 2 },
  },
];

export interface ExploreBench {
  name: string;
  paths: number;
  states: number;
  pruned: number;
  seconds: number;
  /** CPU seconds of this process (user + system): the figure the machine's load does not inflate. */
  cpuSeconds: number;
  pathsPerSecond: number;
}

export async function exploreBenchmark(): Promise<ExploreBench[]> {
  const rows: ExploreBench[] = [];
  for (const { name, options } of BOUNDS) {
    const cpu = process.cpuUsage();
    const result = await exploreAgent(typicalAgent, { replies: TYPICAL_REPLIES, ...options });
    const used = process.cpuUsage(cpu);
    if (result.violating > 0 || !result.complete)
      throw new Error(`bench: the typical agent should explore clean (${name})`);
    rows.push({
      name,
      paths: result.paths,
      states: result.states,
      pruned: result.pruned,
      seconds: result.elapsedMs / 1000,
      cpuSeconds: (used.user + used.system) / 1e6,
      pathsPerSecond: result.pathsPerSecond,
    });
  }
  return rows;
}
