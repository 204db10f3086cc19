import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type AgentEvent, type SessionStore } from 'agentchart';
import type { SessionStep } from 'agentchart/store-kit';
import { sqliteStore } from 'agentchart/sqlite';
import { checkInvariants, scriptedModel } from 'agentchart/testing';

const TURNS = 10_000;
const WINDOW = 200;

const read = defineTool({
  name: 'read_file',
  description: 'Reads a file',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => `${path}: ${'x'.repeat(200)}`,
});

describe('a 10,000-turn session: each step costs the same at turn 10,000 as at turn 1', () => {
  it('runs to the end on SQLite with steps, stored rows and replayed events that do not grow with the session', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentchart-10k-'));
    const raw = sqliteStore(join(dir, 'long.db'));
    // Bytes written per step, and the turn each step belongs to.
    const stepBytes: Array<{ turn: number; bytes: number }> = [];
    let turn = 0;
    const store: SessionStore = {
      ...raw,
      commitStepSync: (sessionId: string, step: SessionStep) => {
        stepBytes.push({ turn, bytes: JSON.stringify(step).length });
        raw.commitStepSync(sessionId, step);
      },
    };
    const model = scriptedModel(
      (_request, call) =>
        call < TURNS
          ? {
              text: `Reading ${call}.`,
              toolCalls: [{ id: `c${call}`, name: 'read_file', arguments: { path: `src/f${call}.ts` } }],
            }
          : { text: 'Done.' },
      { recordRequests: false },
    );
    const agent = createAgent({ model, tools: [read], store, sessionId: 'long' });
    await agent.ready;
    agent.events.subscribe((event) => {
      if (event.type === 'turnStart') turn = event.turnIndex;
    });
    const run = agent.prompt('Read them all.');
    const result = await run.result;
    expect(result.status).toBe('completed');
    expect(result.counters.turns).toBe(TURNS + 1);
    expect(result.messages).toHaveLength(2 * TURNS + 2);

    // What a step writes is the same at turn 10,000 as at turn 1 (no history copy, no checkpoint rewrite).
    const largest = (from: number, to: number) =>
      Math.max(...stepBytes.filter((s) => s.turn >= from && s.turn < to).map((s) => s.bytes));
    const stepsIn = (from: number, to: number) => stepBytes.filter((s) => s.turn >= from && s.turn < to).length;
    expect(largest(TURNS - WINDOW, TURNS)).toBeLessThan(largest(1, 1 + WINDOW) * 1.2);
    expect(stepsIn(TURNS - WINDOW, TURNS)).toBe(stepsIn(1, 1 + WINDOW));

    // A late subscriber gets the bounded window (the default 5,000), ending with agentEnd.
    const replayed: AgentEvent[] = [];
    run.events.subscribe((event) => replayed.push(event));
    expect(replayed).toHaveLength(5_000);
    expect(replayed.at(-1)?.type).toBe('agentEnd');

    // The store has every event, the last model call with its whole context, and the session loads again.
    const stored = await raw.loadEvents('long');
    expect(stored.at(-1)).toMatchObject({ type: 'agentEnd', seq: stored.length - 1 });
    const lastCall = [...stored].reverse().find((event) => event.type === 'beforeModelCall');
    expect(lastCall?.type === 'beforeModelCall' && lastCall.messages.length).toBe(2 * TURNS + 1);
    expect(checkInvariants(stored, result.messages).violations).toEqual([]);
    expect((await raw.load('long'))?.history).toEqual(result.messages);
    raw.close();
    rmSync(dir, { recursive: true, force: true });
  }, 240_000);
});
