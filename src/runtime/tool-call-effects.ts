import { toolCallLogic } from '../../machines/tool-call.machine.js';
import { AgentError } from '../domain/errors.js';
import { jsonCopy } from '../domain/json-problem.js';
import { unfinishedText } from '../../machines/tool-results.js';
import { runToolNow, type ToolRunResult } from '../tools/run.js';
import type { AnyTool } from '../tools/types.js';
import { elicit } from './elicitation.js';
import { idempotencyKeyOf } from './idempotency.js';
import { publishedArguments } from './published-arguments.js';
import { runAction, runDeps, type RunDeps } from './run-registry.js';

/**
 * The tool-call actor's effects: its start and end events, the step boundary it starts after, and
 * the tool itself (with the awaited progress relay). A tool that answers at once settles its call at once.
 */
export function provideToolCallLogic() {
  return toolCallLogic({
    announceExecutionStart: runAction((run, { context }) => {
      // A 'safe' tool re-run after a restart already announced its start before the crash.
      if (context.announced) return;
      const { id: toolCallId, name: toolName, arguments: args } = context.call;
      run.emit({
        type: 'toolExecutionStart',
        turnIndex: context.turnIndex,
        toolCallId,
        toolName,
        arguments: publishedArguments(args),
      });
    }),
    announceExecutionEnd: runAction((run, { context }) => {
      const result = context.result;
      if (!result) return;
      const { toolCallId, toolName, content, isError } = result;
      run.emit({
        type: 'toolExecutionEnd',
        turnIndex: context.turnIndex,
        toolCallId,
        toolName,
        result: content,
        isError,
      });
    }),
    awaitStep: ({ system, done }) => runDeps(system).boundary.afterStep(done),
    executeTool: ({ input, signal, system, settle }) => {
      const run = runDeps(system);
      run.boundary.thenRun(() => {
        const tool = run.agent.registry.get(input.call.name);
        if (!tool) return settle({ content: `Unknown tool "${input.call.name}".`, isError: true });
        const result = execute(run, tool, input.call, input.turnIndex, signal);
        if (result instanceof Promise) void result.then(settle);
        else settle(result);
      });
    },
  });
}

function execute(
  run: RunDeps,
  tool: AnyTool,
  call: { id: string; name: string; arguments: Record<string, unknown> },
  turnIndex: number,
  signal: AbortSignal,
): ToolRunResult | Promise<ToolRunResult> {
  // Cancelled or aborted meanwhile (e.g. from a toolExecutionStart subscriber): the tool never runs.
  if (signal.aborted || run.signal.aborted) return { content: unfinishedText({ kind: 'aborted' }), isError: true };
  const { id: toolCallId, name: toolName } = call;
  let ended = false;
  const publish = (partial: unknown) => {
    if (!signal.aborted && !ended)
      run.emit({ type: 'toolExecutionUpdate', turnIndex, toolCallId, toolName, partial }, undefined, true);
  };
  const runWith = (update: (partial: unknown) => void) =>
    runToolNow(tool, call.arguments, {
      toolCallId,
      signal,
      idempotencyKey: idempotencyKeyOf(run.agent.sessionKey, turnIndex, toolCallId),
      elicit: (request) => elicit(run, call, turnIndex, signal, request),
      // Awaited relay: delivery happens before the promise resolves, so a slow consumer slows the
      // tool and nothing is dropped. An update after the call ended has no call to belong to.
      update: (partial) => {
        // Copied as it is now: a tool that changes its progress object afterwards changes nothing published.
        const checked = jsonCopy(partial, 'partial');
        if ('problem' in checked) return refusedUpdate(toolName, checked.problem);
        update(checked.value);
        return Promise.resolve();
      },
    });
  const host = run.agent.host;
  if (host) {
    // A journaled step: its updates are recorded and published when it is done, as on every replay.
    return host
      .toolCall({ id: toolCallId, name: toolName, replay: tool.replay }, (update) => Promise.resolve(runWith(update)))
      .then((recorded) => {
        for (const partial of recorded.updates) publish(partial);
        ended = true;
        return recorded.result;
      });
  }
  const result = runWith(publish);
  if (!(result instanceof Promise)) {
    ended = true;
    return result;
  }
  return result.then((value) => {
    ended = true;
    return value;
  });
}

/**
 * A progress update JSON cannot hold is refused at the call, with or without a store (the same tool
 * behaves the same everywhere): nothing is published or stored, and the run goes on. The rejection
 * is marked handled, so a tool that does not await its update never crashes the host.
 */
function refusedUpdate(toolName: string, problem: string): Promise<void> {
  const refusal = Promise.reject(
    new AgentError(
      'InvalidInput',
      `ctx.update (tool "${toolName}"): ${problem}; an update must be a JSON value, and this one was not published`,
    ),
  );
  refusal.catch(() => undefined);
  return refusal;
}
