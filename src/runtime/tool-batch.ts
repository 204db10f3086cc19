import { createActor, fromCallback, fromPromise, type ActorRefFrom } from 'xstate';
import { toolCallMachine, type ToolCallInput } from '../../machines/tool-call.machine.js';
import { unfinishedText } from '../../machines/tool-results.js';
import type { BatchCommand, BatchInput, TurnEvent } from '../../machines/turn.machine.js';
import type { PreparedCall } from '../../machines/turn.types.js';
import type { ToolResultMessage } from '../domain/messages.js';
import { runTool, type ToolRunResult } from '../tools/run.js';
import { errorMessage } from './policy-runner.js';
import { bindRun, runOf } from './run-registry.js';
import { raceAbort } from './timers.js';
import { isolatedInspector } from './isolation.js';
import type { RunSession } from './run-session.js';

type ToolCallActor = ActorRefFrom<typeof toolCallMachine>;
type ExecuteToolInput = Pick<ToolCallInput, 'position' | 'call'>;

/** The tool-call machine wired to a run: start/end events, the tool itself, the progress relay. */
export function provideToolCallMachine() {
  return toolCallMachine.provide({
    actors: {
      executeTool: fromPromise<ToolRunResult, ExecuteToolInput>(async ({ input, signal, system }) => {
        // XState starts an invoked actor before the deferred entry actions of its parent's first
        // macrostep: one microtask lets toolExecutionStart be published before the tool runs.
        await Promise.resolve();
        const run = runOf(system);
        // The start is durable before the tool runs (an async store too): a failed write stops the run instead.
        const persister = run.agent.persister;
        if (persister?.busy) await raceAbort(persister.settled(), signal);
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
 * tool-call actor per call, stopped as soon as it finishes. HOLD (steering) starts no further
 * call: the batch settles when the running ones are done, the rest skipped. CANCEL settles every
 * unfinished call at once — tools that ignore their signal never hold the turn.
 */
export function createToolBatch(toolCallLogic: ReturnType<typeof provideToolCallMachine>) {
  return fromCallback<BatchCommand, BatchInput>(({ input, sendBack, receive, system }) => {
    const run = runOf(system);
    const results = new Map(input.results);
    const running = new Map<number, ToolCallActor>();
    const execution = run.agent.resolved.toolExecution;
    const limit = typeof execution === 'object' && 'concurrency' in execution ? execution.concurrency : Number.POSITIVE_INFINITY;
    const inspect = isolatedInspector(run.agent.options.inspect, run.reportSubscriberError);
    const clock = run.agent.options.clock;
    const actorOptions = { ...(clock ? { clock } : {}), ...(inspect ? { inspect } : {}) };
    let groupIndex = 0;
    let queue: PreparedCall[] = [];
    let settled = false;
    const startedCallIds: string[] = [];
    // Set before cancelling: a call finishing during the cancellation must not start the next one.
    let cancelling = false;
    // Steering arrived: calls not started never start; the batch settles once the running ones end.
    let holding = false;
    // An async store is still writing: the next call is announced only once every step before it is durable.
    let awaitingStore = false;

    const settle = (interrupted: boolean) => {
      if (settled) return;
      settled = true;
      sendBack({ type: 'BATCH_SETTLED', results, interrupted, startedCallIds } satisfies TurnEvent);
    };

    const settleHeld = () => {
      const text = unfinishedText({ kind: 'steeringSkipped' });
      for (const entry of input.prepared) {
        if (!results.has(entry.position)) results.set(entry.position, cancelledResult(entry, text));
      }
      settle(true);
    };

    const finishCall = (entry: PreparedCall, result: ToolResultMessage | null) => {
      running.delete(entry.position);
      if (settled || !result) return;
      results.set(entry.position, result);
      pump();
    };

    const startCall = (entry: PreparedCall) => {
      const actor = createActor(toolCallLogic, { input: toolCallInput(run, entry), ...actorOptions });
      bindRun(actor.system, run);
      startedCallIds.push(entry.call.id);
      running.set(entry.position, actor);
      actor.subscribe({
        complete: () => finishCall(entry, actor.getSnapshot().output?.result ?? null),
        // A throw inside the call's own actions: the call still gets its result (parity).
        error: (error) => {
          const internal = `internal error: ${errorMessage(error)}`;
          const result = run.turn.announcedEnds.get(entry.call.id) ?? cancelledResult(entry, internal);
          run.announceToolEnd(result);
          finishCall(entry, result);
        },
      });
      actor.start();
    };

    // Starts calls until the pool is full; moves to the next group when the current one drained.
    const pump = () => {
      while (!settled && !cancelling) {
        // Steering accepted in this very step (its event still queued for the turn) holds the batch too.
        if (run.steeringInterrupts) holding = true;
        if (holding) {
          if (running.size === 0) settleHeld();
          return;
        }
        if (awaitingStore) return;
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
      if (command.type === 'HOLD') {
        holding = true;
        pump();
        return;
      }
      cancelling = true;
      const text = unfinishedText(command.reason === 'steering' ? { kind: 'steering' } : { kind: 'aborted' });
      const startedIds = new Set(startedCallIds);
      for (const actor of [...running.values()]) actor.send({ type: 'CANCEL', result: text });
      for (const entry of input.prepared) {
        if (results.has(entry.position)) continue;
        // A call whose end was already published (its actor is still finishing) keeps that result;
        // a call steering kept from starting is skipped, not cancelled.
        const unstarted = command.reason === 'steering' && !startedIds.has(entry.call.id);
        const content = unstarted ? unfinishedText({ kind: 'steeringSkipped' }) : text;
        results.set(entry.position, run.turn.announcedEnds.get(entry.call.id) ?? cancelledResult(entry, content));
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

/** The call's time limit: the tool's own `timeoutMs`, else the agent's `timeouts.toolMs`, else none. */
function toolCallInput(run: RunSession, entry: PreparedCall): ToolCallInput {
  const timeoutMs = run.agent.registry.get(entry.call.name)?.timeoutMs ?? run.agent.resolved.timeouts.toolMs;
  return { position: entry.position, call: entry.call, timeoutMs };
}

function cancelledResult(entry: PreparedCall, text: string): ToolResultMessage {
  return { role: 'toolResult', toolCallId: entry.call.id, toolName: entry.call.name, content: text, isError: true };
}
