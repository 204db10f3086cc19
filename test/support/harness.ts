import { expect } from 'vitest';
import type { AgentEvent, AgentRun, Counters, RunResult } from 'agentchart';
import { zeroCounters } from 'agentchart/model-kit';
import { checkInvariants, eventTypes } from 'agentchart/testing';

/** Collects a run's whole event log (the run replays its events to late subscribers). */
export async function finished(run: AgentRun): Promise<{ result: RunResult; events: AgentEvent[]; types: string[] }> {
  const result = await run.result;
  const events: AgentEvent[] = [];
  run.events.subscribe((event) => events.push(event));
  return { result, events, types: eventTypes(events) };
}

/** Asserts every counter: the ones not named must be zero. */
export function expectCounters(actual: Counters, expected: Partial<Counters>): void {
  expect(actual).toEqual({ ...zeroCounters(), ...expected });
}

/** Asserts the invariants of checkInvariants on a log (and the history, if given). */
export function expectInvariants(events: AgentEvent[], messages?: Parameters<typeof checkInvariants>[1]): void {
  expect(checkInvariants(events, messages).violations).toEqual([]);
}

/** Drops consecutive messageUpdate events so sequence assertions stay readable. */
export function lifecycle(events: AgentEvent[]): string[] {
  const out: string[] = [];
  for (const event of events) {
    if (event.type === 'messageUpdate' && out.at(-1) === 'messageUpdate+') continue;
    out.push(event.type === 'messageUpdate' ? 'messageUpdate+' : event.type);
  }
  return out;
}

/** Lets promise chains and zero-delay work settle (real macrotask turns, no simulated time). */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A promise with its resolve/reject exposed, for gating tools in tests. */
export function deferred<T = void>(): {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
} {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The events of one type, typed (e.g. `ofType(events, 'turnEnd').map((e) => e.reason)`). */
export function ofType<T extends AgentEvent['type']>(
  events: readonly AgentEvent[],
  type: T,
): Extract<AgentEvent, { type: T }>[] {
  return events.filter((event): event is Extract<AgentEvent, { type: T }> => event.type === type);
}
