import { createAgent } from 'agentchart';
import { piAgent } from './pi-driver.js';
import { fullGc, liveBytes, MB, round2, rssBytes } from './stats.js';
import { benchTools, turnsModel, turnsReplies } from './workload.js';

/**
 * Idle agents: N agents created and kept, none running (a server holding conversations between
 * requests), in a process of its own. Each has its own model and the two bench tools; the live heap
 * (plus external memory) after a full GC and the RSS, against the same process before. Prints one JSON line.
 *
 *   npx tsx bench/idle-agents.ts <agentchart|pi> [count]
 */

export type IdleLibrary = 'agentchart' | 'pi';

export interface IdleAgents {
  library: IdleLibrary;
  agents: number;
  /** Live memory held by all the agents, MB, and per agent, KB. */
  heapMB: number;
  heapKBPerAgent: number;
  /** RSS growth while they were created, MB. */
  rssMB: number;
  /** Creating one agent, µs. */
  createUs: number;
}

const make = (library: IdleLibrary): (() => unknown) =>
  library === 'pi'
    ? () => piAgent(turnsReplies(1, 1))
    : () => createAgent({ model: turnsModel(1, 1), tools: benchTools });

export async function idleAgents(library: IdleLibrary, count: number): Promise<IdleAgents> {
  const create = make(library);
  // Compiled code and module state are not the agents'.
  for (let i = 0; i < 100; i++) create();
  await fullGc();
  const heapBefore = liveBytes();
  const rssBefore = rssBytes();
  const started = performance.now();
  const agents = Array.from({ length: count }, create);
  const createUs = ((performance.now() - started) * 1000) / count;
  await fullGc();
  const heap = liveBytes() - heapBefore;
  const rss = rssBytes() - rssBefore;
  if (agents.length !== count) throw new Error('unreachable');
  return {
    library,
    agents: count,
    heapMB: round2(heap / MB),
    heapKBPerAgent: round2(heap / count / 1024),
    rssMB: round2(rss / MB),
    createUs: round2(createUs),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [library, count = '10000'] = process.argv.slice(2);
  if (library !== 'agentchart' && library !== 'pi') {
    process.stderr.write('usage: bench/idle-agents.ts <agentchart|pi> [count]\n');
    process.exit(2);
  }
  process.stdout.write(`${JSON.stringify(await idleAgents(library, Number(count)))}\n`);
}
