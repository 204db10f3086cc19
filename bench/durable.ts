import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { macrotask, median, round2, sampled, type Sampled } from './stats.js';

/**
 * What durability costs a run: T turns × 1 instant tool call on the memory store and on SQLite,
 * as µs per turn and per committed step (the steps counted by wrapping the store). The store
 * workloads of `npm run bench`; `bench/compare-durable.ts` runs them on two builds in one process,
 * in alternating rounds, to compare a change on this shared machine.
 */

/** The part of the agentchart package this benchmark drives (a build loaded by path, or the package). */
export interface DurableImplementation {
  createAgent: typeof import('agentchart').createAgent;
  defineTool: typeof import('agentchart').defineTool;
  memoryStore: typeof import('agentchart').memoryStore;
  sqliteStore: typeof import('agentchart/sqlite').sqliteStore;
  scriptedModel: typeof import('agentchart/testing').scriptedModel;
}

export interface DurableCost {
  store: 'memory' | 'sqlite';
  turns: number;
  /** Steps one run commits (the same for every round). */
  steps: number;
  usPerTurn: Sampled;
  usPerStep: Sampled;
}

type Store = ReturnType<DurableImplementation['memoryStore']>;

/** One timed run of `turns` turns on a fresh session: its wall time and the steps it committed. */
export async function durableRun(
  impl: DurableImplementation,
  kind: DurableCost['store'],
  turns: number,
): Promise<{ ms: number; steps: number }> {
  const dir = kind === 'sqlite' ? mkdtempSync(join(tmpdir(), 'agentchart-bench-durable-')) : null;
  const base = (dir ? impl.sqliteStore(join(dir, 's.db')) : impl.memoryStore()) as Store & { close?: () => void };
  let steps = 0;
  const store: Store = {
    ...base,
    commitStepSync: (sessionId, step) => {
      steps += 1;
      base.commitStepSync(sessionId, step);
    },
  };
  const tool = impl.defineTool({
    name: 'noop',
    description: 'Does nothing.',
    parameters: z.object({ i: z.number() }),
    execute: () => 'ok',
  });
  const model = impl.scriptedModel(
    (_request, call) =>
      call < turns ? { toolCalls: [{ id: `call_${call}`, name: 'noop', arguments: { i: call } }] } : { text: 'done' },
    { recordRequests: false },
  );
  const agent = impl.createAgent({ model, tools: [tool], store, sessionId: 'bench' });
  await agent.ready;
  const begin = performance.now();
  const result = await agent.prompt('go').result;
  const ms = performance.now() - begin;
  if (result.status !== 'completed' || result.counters.turns !== turns + 1) {
    throw new Error(`bench: the durable run ended ${result.status} after ${result.counters.turns} turns`);
  }
  await agent.close();
  base.close?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
  return { ms, steps };
}

/** Rounds of `durableRun` on each store for every implementation, alternating them within each round. */
export async function durableCost(
  impls: Record<string, DurableImplementation>,
  turns: number,
  rounds: number,
  warmups: number,
): Promise<Record<string, DurableCost[]>> {
  const kinds: Array<DurableCost['store']> = ['memory', 'sqlite'];
  const names = Object.keys(impls);
  const samples = new Map<string, { ms: number[]; steps: number }>();
  for (let round = -warmups; round < rounds; round++) {
    // The order within a round alternates, so neither build always runs first.
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const kind of kinds) {
      for (const name of order) {
        const { ms, steps } = await durableRun(impls[name] as DurableImplementation, kind, turns);
        await macrotask();
        if (round < 0) continue;
        const key = `${name}/${kind}`;
        const entry = samples.get(key) ?? { ms: [], steps };
        entry.ms.push(ms);
        samples.set(key, entry);
      }
    }
  }
  const out: Record<string, DurableCost[]> = {};
  for (const name of names) {
    out[name] = kinds.map((kind) => {
      const entry = samples.get(`${name}/${kind}`) as { ms: number[]; steps: number };
      return {
        store: kind,
        turns: turns + 1,
        steps: entry.steps,
        usPerTurn: sampled(entry.ms.map((ms) => (ms * 1000) / (turns + 1))),
        usPerStep: sampled(entry.ms.map((ms) => (ms * 1000) / entry.steps)),
      };
    });
  }
  return out;
}

/** Medians side by side: `after / before` per store. */
export function durableRatios(before: DurableCost[], after: DurableCost[]): Record<string, number> {
  const ratios: Record<string, number> = {};
  for (const cost of after) {
    const base = before.find((b) => b.store === cost.store);
    if (base) ratios[cost.store] = round2(median(cost.usPerTurn.samples) / median(base.usPerTurn.samples));
  }
  return ratios;
}
