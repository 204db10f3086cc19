import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectTrusted, watchTheProcess } from './harness.js';

// The hostile-input contract, fairness: a run yields to the macrotask queue at least once per turn, so timers, I/O
// and an abort() from a setTimeout run even when the model and the tools never leave the
// microtask queue (a synchronous scripted model and synchronous tools, no maxTurns).

watchTheProcess();

const PROMPT = 'loop forever';
const noop = defineTool({
  name: 'noop',
  description: 'returns at once',
  parameters: z.object({}),
  execute: () => 'ok',
});

/** A model that asks for a tool call on every call, for ever (capped far beyond any run here). */
const endless = () =>
  scriptedModel((_request, callIndex) => (callIndex < 100_000 ? { toolCalls: [{ name: 'noop' }] } : undefined), {
    recordRequests: false,
  });

describe('a synchronous model and synchronous tools never starve the event loop', () => {
  it('abort() from a setTimeout takes effect within one turn of the timer firing', async () => {
    const agent = createAgent({ model: endless(), tools: [noop] });
    const run = agent.prompt(PROMPT);
    let turnsWhenFired = -1;
    setTimeout(() => {
      turnsWhenFired = agent.counters.turns;
      agent.abort('timer fired');
    }, 20);
    const { result } = await expectTrusted(run, [PROMPT]);
    expect(turnsWhenFired).toBeGreaterThanOrEqual(0);
    expect(result).toMatchObject({ status: 'aborted', error: { message: 'timer fired' } });
    expect(result.counters.turns - turnsWhenFired).toBeLessThanOrEqual(1);
  });

  it('the macrotask queue gets a turn at least once per turn of the agent', async () => {
    let ticks = 0;
    let ticking = true;
    const tick = () => {
      ticks++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const agent = createAgent({ model: endless(), tools: [noop], maxTurns: 200 });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    ticking = false;
    expect(result).toMatchObject({ status: 'failed', endReason: 'maxTurns' });
    expect(result.counters.turns).toBe(200);
    expect(ticks).toBeGreaterThanOrEqual(result.counters.turns / 2);
  });

  it('I/O started with the run completes while the run is still going', async () => {
    // 500 turns are ~5,500 events: all kept for the late subscriber that checks the whole log.
    const agent = createAgent({ model: endless(), tools: [noop], maxTurns: 500, replayBuffer: 10_000 });
    let turnsWhenRead = -1;
    const read = readFile(new URL(import.meta.url)).then(() => (turnsWhenRead = agent.counters.turns));
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    await read;
    expect(result.counters.turns).toBe(500);
    expect(turnsWhenRead).toBeGreaterThanOrEqual(0);
    expect(turnsWhenRead).toBeLessThan(500);
  });

  it('steer() from a setTimeout reaches a synchronous session and interrupts it', async () => {
    const agent = createAgent({ model: endless(), tools: [noop], maxTurns: 2_000 });
    const run = agent.prompt(PROMPT);
    const receipt = new Promise((resolve) => setTimeout(() => resolve(agent.steer('stop looping')), 10));
    await expect(receipt).resolves.toBeDefined();
    agent.abort('enough');
    const { result } = await expectTrusted(run, [PROMPT]);
    expect(result.status).toBe('aborted');
    expect(await ((await receipt) as Promise<unknown>)).toMatchObject({
      status: expect.stringMatching(/delivered|stillQueued/),
    });
    expect(result.counters.turns).toBeLessThan(2_000);
  });
});
