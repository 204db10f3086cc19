import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import {
  TOOL_RETURNED,
  toolCallLogic,
  toolCallMachine,
  type ToolCallEffects,
  type ToolCallInput,
} from '../../machines/tool-call.machine.js';
import type { ToolResultMessage } from '../../src/domain/messages.js';

/**
 * The light tool-call logic the runtime plays the chart with, driven by hand: what its effects see and
 * what becomes of the tool's signal when the call ends before its tool did.
 */

const CALL = { type: 'toolCall' as const, id: 'c1', name: 'read', arguments: {} };
const input = (timeoutMs: number | null = null): ToolCallInput => ({
  turnIndex: 0,
  position: 0,
  call: CALL,
  timeoutMs,
  announced: false,
});

type Tool = Parameters<ToolCallEffects['executeTool']>[0];

function harness(run: (tool: Tool) => void = () => {}, holdStep = false) {
  const log: string[] = [];
  const ends: Array<ToolResultMessage | null> = [];
  let tool: Tool | null = null;
  const logic = toolCallLogic({
    announceExecutionStart: () => log.push('start'),
    announceExecutionEnd: ({ context }) => {
      log.push('end');
      ends.push(context.result);
    },
    awaitStep: ({ done }) => {
      log.push('await');
      if (!holdStep) done();
    },
    executeTool: (args) => {
      tool = args;
      run(args);
    },
  });
  return { logic, log, ends, tool: () => tool as Tool | null };
}

describe('tool-call logic', () => {
  it('a tool that reports a throw through `fail`, or throws at once: the call failed with the error as its result', () => {
    const failing = harness((tool) => tool.fail(new Error('disk on fire')));
    const a = createActor(failing.logic, { input: input() }).start();
    expect(a.getSnapshot()).toMatchObject({ status: 'done', value: 'failed' });
    expect(a.getSnapshot().output?.result).toEqual({
      role: 'toolResult',
      toolCallId: 'c1',
      toolName: 'read',
      content: 'Error: disk on fire',
      isError: true,
    });
    expect(failing.log).toEqual(['await', 'start', 'end']);

    const throwing = harness(() => {
      throw new Error('at once');
    });
    const b = createActor(throwing.logic, { input: input() }).start();
    expect(b.getSnapshot()).toMatchObject({ status: 'done', value: 'failed' });
    expect(b.getSnapshot().output?.result.content).toBe('Error: at once');
  });

  it('cancelled while its tool runs: the tool’s signal is aborted; a late answer changes nothing', () => {
    const h = harness();
    const actor = createActor(h.logic, { input: input() }).start();
    const tool = h.tool();
    expect(tool?.signal.aborted).toBe(false);
    actor.send({ type: 'CANCEL', result: 'cancelled: steering' });
    expect(tool?.signal.aborted).toBe(true);
    expect(actor.getSnapshot()).toMatchObject({ status: 'done', value: 'cancelled' });
    tool?.settle({ content: 'late', isError: false });
    expect(actor.getSnapshot().output?.result.content).toBe('cancelled: steering');
    expect(h.log).toEqual(['await', 'start', 'end']);
  });

  it('over its time limit (on the actor system’s clock): timed out, the signal aborted; no limit, no timer', () => {
    const clock = new SimulatedClock();
    const h = harness();
    const actor = createActor(h.logic, { input: input(1_000), clock }).start();
    clock.increment(999);
    expect(actor.getSnapshot().value).toBe('executing');
    clock.increment(1);
    expect(actor.getSnapshot()).toMatchObject({ status: 'done', value: 'timedOut' });
    expect(actor.getSnapshot().output?.result).toMatchObject({ content: 'timed out after 1000 ms', isError: true });
    expect(h.tool()?.signal.aborted).toBe(true);

    const unlimited = harness();
    const free = createActor(unlimited.logic, { input: input(null), clock }).start();
    clock.increment(1_000_000);
    expect(free.getSnapshot().value).toBe('executing');
    unlimited.tool()?.settle({ content: 'done', isError: false });
    expect(free.getSnapshot()).toMatchObject({ status: 'done', value: 'succeeded' });
    expect(unlimited.tool()?.signal.aborted).toBe(false);
  });

  it('stopped before its step ended (never started): stopped quietly', () => {
    const h = harness(() => {}, true);
    const actor = createActor(h.logic, { input: input() }).start();
    actor.stop();
    expect(actor.getSnapshot().status).toBe('stopped');
    expect(h.log).toEqual(['await']);
  });

  it('stopped while its tool runs (the turn is torn down): the signal is aborted, no end is announced', () => {
    const h = harness();
    const actor = createActor(h.logic, { input: input() }).start();
    actor.stop();
    expect(h.tool()?.signal.aborted).toBe(true);
    expect(actor.getSnapshot().status).toBe('stopped');
    expect(h.log).toEqual(['await', 'start']);
  });

  it('a finished call neither starts again nor takes another event', () => {
    const h = harness((tool) => tool.settle({ content: 'ok', isError: false }));
    const actor = createActor(h.logic, { input: input() }).start();
    const done = actor.getSnapshot();
    expect(done).toMatchObject({ status: 'done', value: 'succeeded' });
    const scope = { self: actor, system: actor.system } as unknown as Parameters<typeof h.logic.transition>[2];
    const again = h.logic.transition(done, { type: TOOL_RETURNED, output: { content: 'twice', isError: true } }, scope);
    expect(again).toBe(done);
    h.logic.start?.(done, scope);
    expect(h.log).toEqual(['await', 'start', 'end']);
  });

  it('the chart itself, run with its effects: the tool gets the call, the time limit runs on the clock', async () => {
    const seen: unknown[] = [];
    const chart = (answer: Promise<{ content: string; isError: boolean }>) =>
      toolCallMachine.provide({
        actors: {
          awaitStep: fromPromise(async () => {}),
          executeTool: fromPromise(async ({ input }) => {
            seen.push(input);
            return answer;
          }),
        },
        actions: { announceExecutionStart: () => {}, announceExecutionEnd: () => {} },
      });
    const answered = createActor(chart(Promise.resolve({ content: 'ok', isError: false })), { input: input(1_000) });
    answered.start();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(seen).toEqual([{ turnIndex: 0, position: 0, call: CALL }]);
    expect(answered.getSnapshot()).toMatchObject({ status: 'done', value: 'succeeded' });

    const clock = new SimulatedClock();
    const slow = createActor(chart(new Promise(() => {})), { input: input(1_000), clock });
    slow.start();
    await new Promise((resolve) => setTimeout(resolve, 0));
    clock.increment(999);
    expect(slow.getSnapshot().value).toBe('executing');
    clock.increment(1);
    expect(slow.getSnapshot()).toMatchObject({ status: 'done', value: 'timedOut' });
  });
});
