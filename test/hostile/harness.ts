import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { SimulatedClock } from 'xstate';
import type { Agent, AgentEvent, AgentRun, Counters, Model, ModelStreamEvent, RunResult } from 'agentchart';
import { CountersSchema } from '../../src/domain/counters.js';
import { checkInvariants } from 'agentchart/testing';

/**
 * The hostile corpus's common checks (the hostile-input contract). Every case asserts, through the public API only:
 * the run settles; the typed error or the synthetic result it expects; the event-log invariants
 * (parity, pairing, counters) on the whole log; the user's input is in history; every counter is a
 * finite non-negative number; and no unhandled rejection or uncaught exception reached the process.
 */

const escaped: unknown[] = [];
const onRejection = (reason: unknown) => escaped.push(reason);
const onException = (error: unknown) => escaped.push(error);

/** Installs process-level listeners for the file; after each case, asserts they saw nothing. */
export function watchTheProcess(): void {
  beforeAll(() => {
    process.on('unhandledRejection', onRejection);
    process.on('uncaughtException', onException);
  });
  afterEach(async () => {
    // Unhandled rejections are reported after the microtask queue drains: give them their turn.
    await macrotasks(3);
    const seen = escaped.splice(0);
    expect(seen.map(String), 'an unhandled rejection or an uncaught exception reached the process').toEqual([]);
  });
  afterAll(() => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  });
}

export function macrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export async function macrotasks(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await macrotask();
}

/** Whether a promise has settled, without waiting for it. */
export function settledFlag(promise: Promise<unknown>): { readonly settled: boolean } {
  const state = { settled: false };
  promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}

/**
 * Lets a run finish on the simulated clock: macrotasks, then the clock moves a step, until the
 * result settles (backoffs and timeouts elapse without real waiting). Fails if it never does.
 */
export async function settleRun(
  run: AgentRun,
  clock?: SimulatedClock,
  { stepMs = 1_000, rounds = 400 } = {},
): Promise<RunResult> {
  const flag = settledFlag(run.result);
  if (!clock) {
    // Real time (I/O): a guard against a hang, not a wait; a settled run returns at once.
    let guard: ReturnType<typeof setTimeout> | undefined;
    const hung = new Promise<'hung'>((resolve) => (guard = setTimeout(() => resolve('hung'), HANG_GUARD_MS)));
    const outcome = await Promise.race([run.result, hung]);
    clearTimeout(guard);
    expect(outcome, 'the run never settled').not.toBe('hung');
    return run.result;
  }
  for (let round = 0; round < rounds && !flag.settled; round++) {
    await macrotasks(2);
    if (!flag.settled) clock.increment(stepMs);
  }
  expect(flag.settled, 'the run never settled').toBe(true);
  return run.result;
}

/** How long a run on the real clock may take before the case calls it hung. */
const HANG_GUARD_MS = 10_000;

/** The run's whole log (a run replays its events to late subscribers). */
export function logOf(run: AgentRun): AgentEvent[] {
  const events: AgentEvent[] = [];
  run.events.subscribe((event) => events.push(event));
  return events;
}

/** Every counter is a finite, non-negative number (integers where the schema says so). */
export function expectSaneCounters(counters: Counters): void {
  expect(CountersSchema.safeParse(counters).success, JSON.stringify(counters)).toBe(true);
  for (const [key, value] of Object.entries(counters)) {
    if (key === 'failureCodes') continue;
    expect(Number.isFinite(value) && (value as number) >= 0, `${key} = ${String(value)}`).toBe(true);
  }
}

export interface Trusted {
  result: RunResult;
  events: AgentEvent[];
}

/**
 * The checks every case makes once its run settled: invariants on the log and the history, the
 * user's inputs in history, sane counters, and agentEnd agreeing with the result.
 */
export async function expectTrusted(
  run: AgentRun,
  inputs: readonly string[],
  clock?: SimulatedClock,
  settle: { stepMs?: number } = {},
): Promise<Trusted> {
  const result = await settleRun(run, clock, settle);
  const events = logOf(run);
  expect(checkInvariants(events, result.messages).violations).toEqual([]);
  for (const input of inputs) {
    expect(
      result.messages.some((message) => message.role === 'user' && message.content === input),
      `"${input}" is in history`,
    ).toBe(true);
  }
  expectSaneCounters(result.counters);
  const end = events.at(-1);
  expect(end?.type).toBe('agentEnd');
  if (end?.type === 'agentEnd') {
    expect({ status: end.status, endReason: end.endReason }).toEqual({
      status: result.status,
      endReason: result.endReason,
    });
    expect(end.error).toEqual(result.error);
  }
  return { result, events };
}

/** The agent is idle again and takes a new prompt: the failure left nothing stuck. */
export function expectIdle(agent: Agent): void {
  expect(agent.running).toBe(false);
  expect(agent.currentRun).toBeNull();
}

export const ofType = <T extends AgentEvent['type']>(events: readonly AgentEvent[], type: T) =>
  events.filter((event): event is Extract<AgentEvent, { type: T }> => event.type === type);

/** A model whose k-th call returns `calls[k]()` as its stream, whatever that is (hostile on purpose). */
export function rawModel(
  calls: ReadonlyArray<(signal: AbortSignal) => unknown>,
  name = 'raw',
): Model & { calls: number } {
  const model = {
    name,
    calls: 0,
    stream(_request: unknown, { signal }: { signal: AbortSignal }) {
      const make = calls[model.calls++];
      if (!make) throw new Error(`rawModel: no stream for call #${model.calls - 1}`);
      return make(signal) as AsyncIterable<ModelStreamEvent>;
    },
  };
  return model;
}

/** An async generator of raw values; `closed.count` tells whether its `finally` ran (the iterator was closed). */
export function generatorOf(values: readonly unknown[], closed: { count: number }): () => AsyncGenerator<unknown> {
  return async function* () {
    try {
      for (const value of values) yield value;
    } finally {
      closed.count++;
    }
  };
}

export const TEXT = (text: string): unknown[] => [
  { type: 'start' },
  { type: 'textDelta', delta: text },
  { type: 'done', stopReason: 'stop' },
];
export const CALL = (id: string, name: string, args: string): unknown[] => [
  { type: 'toolCallStart', index: 0, id, name },
  { type: 'toolCallDelta', index: 0, argumentsDelta: args },
  { type: 'toolCallEnd', index: 0 },
];
