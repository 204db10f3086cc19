import { createActor, fromCallback, fromPromise, type ActorRefFrom } from 'xstate';
import { toolCallMachine, type ToolCallInput } from '../../machines/tool-call.machine.js';
import { unfinishedText } from '../../machines/tool-results.js';
import type { BatchCommand, BatchInput, TurnEvent } from '../../machines/turn.machine.js';
import type { PreparedCall } from '../../machines/turn.types.js';
import type { ToolResultMessage } from '../domain/messages.js';
import { runTool } from '../tools/run.js';
import { bindRun, runOf } from './run-registry.js';

type ToolCallActor = ActorRefFrom<typeof toolCallMachine>;

/** The tool-call machine wired to a run: start/end events, the tool itself, the progress relay. */
export function provideToolCallMachine() {
  return toolCallMachine.provide({
    actors: {
      executeTool: fromPromise<{ content: string; isError: boolean }, ToolCallInput>(async ({ input, signal, system }) => {
        // XState starts an invoked actor before the deferred entry actions of its parent's first
        // macrostep: one microtask lets toolExecutionStart be published before the tool runs.
        await Promise.resolve();
        const run = runOf(system);
        // The start is durable before the tool runs (an async store too): a failed write stops the run instead.
        await run.agent.persister?.settled();
        // Cancelled or aborted meanwhile (a toolExecutionStart subscriber, a failed write): the tool never runs.
        if (signal.aborted || run.signal.aborted) return { content: unfinishedText({ kind: 'aborted' }), isError: true };
        const tool = run.agent.registry.get(input.call.name);
        if (!tool) return { content: `Unknown tool "${input.call.name}".`, isError: true };
        const turnIndex = run.turn.turnIndex;
        const { id: toolCallId, name: toolName } = input.call;
        let ended = false;
        const publish = (partial: unknown) => {
          if (signal.aborted || ended) return;
          run.emit({ type: 'toolExecutionUpdate', turnIndex, toolCallId, toolName, partial });
        };
        const execute = (update: (partial: unknown) => void) =>
          runTool(tool, input.call.arguments, {
            toolCallId,
            signal,
            idempotencyKey: `${run.agent.persister?.sessionId ?? run.runId}:${toolCallId}`,
            // Awaited relay: delivery happens before the promise resolves, so a slow consumer slows the
            // tool and nothing is dropped. An update after the call ended has no call to belong to.
            update: (partial) => {
              update(partial);
              return Promise.resolve();
            },
          });
        const host = run.agent.host;
        if (!host) {
          const result = await execute(publish);
          ended = true;
          return result;
        }
        // A journaled step: its updates are recorded and published when it is done, as on every replay.
        const recorded = await host.toolCall({ id: toolCallId, name: toolName, replay: tool.replay }, execute);
        for (const partial of recorded.updates) publish(partial);
        ended = true;
        return recorded.result;
      }),
    },
    actions: {
      announceExecutionStart: ({ context, system }) => {
        const run = runOf(system);
        // A 'safe' tool re-run after a restart already announced its start before the crash.
        if (run.turn.started.has(context.call.id)) return;
        run.turn.started.add(context.call.id);
        run.emit({ type: 'toolExecutionStart', turnIndex: run.turn.turnIndex, toolCallId: context.call.id, toolName: context.call.name, arguments: context.call.arguments });
      },
      announceExecutionEnd: ({ context, system }) => {
        if (context.result) runOf(system).announceToolEnd(context.result);
      },
    },
  });
}

/**
 * Runs the prepared calls group after group (a pool of `concurrency` inside a group), one
 * tool-call actor per call, stopped as soon as it finishes. CANCEL settles every unfinished call
 * at once — tools that ignore their signal never hold the turn.
 */
export function createToolBatch(toolCallLogic: ReturnType<typeof provideToolCallMachine>) {
  return fromCallback<BatchCommand, BatchInput>(({ input, sendBack, receive, system }) => {
    const run = runOf(system);
    const results = new Map(input.results);
    const running = new Map<number, ToolCallActor>();
    const execution = run.agent.resolved.toolExecution;
    const limit = typeof execution === 'object' && 'concurrency' in execution ? execution.concurrency : Number.POSITIVE_INFINITY;
    let groupIndex = 0;
    let queue: PreparedCall[] = [];
    let settled = false;
    const startedCallIds: string[] = [];
    // Set before cancelling: a call finishing during the cancellation must not start the next one.
    let cancelling = false;
    // An async store is still writing: the next call is announced only once every step before it is durable.
    let awaitingStore = false;

    const settle = (interrupted: boolean) => {
      if (settled) return;
      settled = true;
      sendBack({ type: 'BATCH_SETTLED', results, interrupted, startedCallIds } satisfies TurnEvent);
    };

    const startCall = (entry: PreparedCall) => {
      const actor = createActor(toolCallLogic, { input: { position: entry.position, call: entry.call }, inspect: run.agent.options.inspect as never });
      bindRun(actor.system, run);
      startedCallIds.push(entry.call.id);
      running.set(entry.position, actor);
      actor.subscribe({
        complete: () => {
          const output = actor.getSnapshot().output;
          running.delete(entry.position);
          if (settled || !output) return;
          results.set(output.position, output.result);
          pump();
        },
      });
      actor.start();
    };

    // Starts calls until the pool is full; moves to the next group when the current one drained.
    const pump = () => {
      while (!settled && !cancelling && !awaitingStore) {
        if (queue.length === 0 && running.size === 0) {
          if (groupIndex >= input.groups.length) return settle(false);
          // Cancellation is checked before each group: a later group never starts after an abort.
          if (run.signal.aborted) return;
          queue = (input.groups[groupIndex++] ?? []).map((index) => input.prepared[index] as PreparedCall);
        }
        if (queue.length === 0 || running.size >= limit) return;
        if (run.signal.aborted) return;
        const persister = run.agent.persister;
        if (persister?.busy) {
          awaitingStore = true;
          void persister.settled().then(() => {
            awaitingStore = false;
            pump();
          });
          return;
        }
        startCall(queue.shift() as PreparedCall);
      }
    };

    receive((command) => {
      if (settled || cancelling) return;
      cancelling = true;
      const text = unfinishedText(command.reason === 'steering' ? { kind: 'steering' } : { kind: 'aborted' });
      for (const actor of [...running.values()]) actor.send({ type: 'CANCEL', result: text });
      for (const entry of input.prepared) {
        if (results.has(entry.position)) continue;
        // A call whose end was already published (its actor is still finishing) keeps that result.
        results.set(entry.position, run.turn.announcedEnds.get(entry.call.id) ?? cancelledResult(entry, text));
      }
      settle(command.reason === 'steering');
    });

    pump();
    return () => {
      for (const actor of running.values()) actor.stop();
      running.clear();
    };
  });
}

function cancelledResult(entry: PreparedCall, text: string): ToolResultMessage {
  return { role: 'toolResult', toolCallId: entry.call.id, toolName: entry.call.name, content: text, isError: true };
}
