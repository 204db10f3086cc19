import { describe, expect, it } from 'vitest';
import { filter, map } from 'rxjs';
import { z } from 'zod';
import { createAgent, defineTool, type AgentEvent } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectTrusted, macrotasks, watchTheProcess } from './harness.js';

// The hostile-input contract, subscribers: a subscriber that throws or returns a rejected promise, and an
// onSubscriberError that throws, never crash the host (no unhandled rejection, no uncaught
// exception) and never break the run or the other subscribers.

watchTheProcess();

const PROMPT = 'keep going whatever the listeners do';
const echo = defineTool({
  name: 'echo',
  description: 'echoes',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});
const session = () =>
  scriptedModel([{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'hi' } }] }, { text: 'done' }]);

type Subscribe = (events: { subscribe: (...args: never[]) => unknown; pipe: (...args: never[]) => unknown }) => void;

const HOSTILE_SUBSCRIBERS: Array<[string, Subscribe]> = [
  [
    'a subscriber that throws',
    (events) =>
      (events.subscribe as (fn: (event: AgentEvent) => void) => void)(() => {
        throw new Error('subscriber exploded');
      }),
  ],
  [
    'an async subscriber that rejects',
    (events) =>
      (events.subscribe as (fn: (event: AgentEvent) => Promise<void>) => void)(async () => {
        throw new Error('async subscriber rejected');
      }),
  ],
  [
    'a subscriber returning a rejected promise of a non-Error',
    (events) => (events.subscribe as (fn: (event: AgentEvent) => Promise<void>) => void)(() => Promise.reject(42)),
  ],
  [
    'an observer whose complete throws',
    (events) =>
      (events.subscribe as (o: object) => void)({
        next: () => {},
        complete: () => {
          throw new Error('complete exploded');
        },
      }),
  ],
  [
    'an operator in a pipe that throws (no error callback)',
    (events) =>
      (events.pipe as (...ops: unknown[]) => { subscribe: (fn: () => void) => void })(
        map(() => {
          throw new Error('map exploded');
        }),
      ).subscribe(() => {}),
  ],
  [
    'an error callback that throws itself',
    (events) =>
      (events.pipe as (...ops: unknown[]) => { subscribe: (o: object) => void })(
        filter(() => {
          throw new Error('filter exploded');
        }),
      ).subscribe({
        error: () => {
          throw new Error('error callback exploded');
        },
      }),
  ],
];

describe('hostile subscribers never crash the host nor break the run', () => {
  it.each(HOSTILE_SUBSCRIBERS)('%s on run.events', async (_name, subscribe) => {
    const reported: unknown[] = [];
    const agent = createAgent({ model: session(), tools: [echo], onSubscriberError: (error) => reported.push(error) });
    const run = agent.prompt(PROMPT);
    subscribe(run.events as never);
    const healthy: string[] = [];
    run.events.subscribe((event) => healthy.push(event.type));
    const { result, events } = await expectTrusted(run, [PROMPT]);
    await macrotasks(2);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    expect(healthy).toEqual(events.map((event) => event.type));
    expect(reported.length).toBeGreaterThan(0);
  });

  // agent.events spans runs and never completes, so a throwing `complete` has nothing to report there.
  it.each(HOSTILE_SUBSCRIBERS.filter(([name]) => !name.includes('complete')))(
    '%s on agent.events',
    async (_name, subscribe) => {
      const reported: unknown[] = [];
      const agent = createAgent({
        model: session(),
        tools: [echo],
        onSubscriberError: (error) => reported.push(error),
      });
      subscribe(agent.events as never);
      const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
      await macrotasks(2);
      expect(result.status).toBe('completed');
      expect(reported.length).toBeGreaterThan(0);
    },
  );

  it.each([
    [
      'throws',
      () => {
        throw new Error('onSubscriberError exploded');
      },
    ],
    ['rejects', () => Promise.reject(new Error('onSubscriberError rejected'))],
  ])('an onSubscriberError that %s is dropped, never thrown at the host', async (_name, onSubscriberError) => {
    const agent = createAgent({
      model: session(),
      tools: [echo],
      onSubscriberError: onSubscriberError as (error: unknown) => void,
    });
    agent.events.subscribe(() => {
      throw new Error('subscriber exploded');
    });
    agent.events.subscribe(async () => {
      throw new Error('async subscriber rejected');
    });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    await macrotasks(2);
    expect(result.status).toBe('completed');
  });

  it('an inspection observer that throws is isolated like a subscriber', async () => {
    const reported: unknown[] = [];
    const agent = createAgent({
      model: session(),
      tools: [echo],
      inspect: () => {
        throw new Error('inspector exploded');
      },
      onSubscriberError: (error) => reported.push(error),
    });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result.status).toBe('completed');
    expect(reported.length).toBeGreaterThan(0);
  });

  it('an inspection observer object whose next throws is isolated too', async () => {
    const reported: unknown[] = [];
    const agent = createAgent({
      model: session(),
      tools: [echo],
      inspect: {
        next: () => {
          throw new Error('observer exploded');
        },
      },
      onSubscriberError: (error) => reported.push(error),
    });
    const { result } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(result.status).toBe('completed');
    expect(reported.length).toBeGreaterThan(0);
  });

  it('a subscriber that unsubscribes others and itself mid-delivery does not skip events for the rest', async () => {
    const agent = createAgent({ model: session(), tools: [echo] });
    const seen: string[] = [];
    let first: { unsubscribe(): void } | undefined;
    first = agent.events.subscribe((event) => {
      if (event.type === 'turnStart') first?.unsubscribe();
    });
    agent.events.subscribe((event) => seen.push(event.type));
    const { events } = await expectTrusted(agent.prompt(PROMPT), [PROMPT]);
    expect(seen).toEqual(events.map((event) => event.type));
  });
});
