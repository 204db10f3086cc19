import type { AnyActorRef } from 'xstate';
import type { MasterContext } from '../../machines/master.types.js';
import { settledByPosition } from '../../machines/tool-results.js';
import type { ToolCallOutput } from '../../machines/tool-call.machine.js';
import type { TurnContext } from '../../machines/turn.context.js';
import { describeError } from '../../machines/master.machine.js';
import { toolCallsOf, type AssistantMessage, type Message, type ToolResultMessage } from '../domain/messages.js';
import { openTurnOf } from './checkpoint.js';
import { publishTurnEnd } from './turn-end.js';
import type { RunDeps } from './run-registry.js';

type MasterSnapshot = Parameters<typeof openTurnOf>[0];

/**
 * After an internal error (a throw inside an effect or a machine action), keeps the log whole
 * from what the machines held when it happened: the turn's input is committed, a
 * half-published message is ended, a published reply is committed with one result per tool call,
 * and the open turn gets its turnEnd. A reply already published is never replaced, and no second
 * messageStart is emitted.
 */
export function closeAfterInternalError(run: RunDeps, master: unknown, error: unknown): void {
  const snapshot = master as MasterSnapshot;
  const context: MasterContext = snapshot.context;
  const unsaved = notIn(run.agent.history, [...context.turnInput, ...context.pending]);
  if (unsaved.length > 0) run.commit(unsaved, context.turnIndex);
  const { turn } = openTurnOf(snapshot, run);
  // Tool calls still running stop (their tools are aborted); their results are settled below.
  for (const call of turn?.calls ?? [])
    if ((call.getSnapshot() as { status: string }).status === 'active') call.send({ type: 'xstate.stop' });
  if (!turn) return;
  const detail = `internal error: ${describeError(error)}`;
  const turnContext = turn.snapshot?.context ?? null;
  const committed = turn.snapshot ? turn.snapshot.matches('RESPONSE') || turn.snapshot.matches('done') : false;
  const live = run.live;
  run.live = null;
  let reply = turnContext?.reply && !(turn.snapshot?.status === 'done') ? turnContext.reply.message : null;
  if (!committed && live?.open) {
    // A live message cut by the error: what was streamed is its content, with stopReason error.
    const streamed = live.accumulator?.abort(detail);
    const base = streamed ?? { role: 'assistant' as const, content: [], model: undefined };
    const message: AssistantMessage = { ...base, stopReason: 'error', errorMessage: detail };
    run.emit({ type: 'messageEnd', turnIndex: turn.turnIndex, message });
    reply = message;
  }
  const assistant = turnContext?.assistant ?? reply;
  let results: ToolResultMessage[] = [];
  if (assistant) {
    const published = turn.snapshot
      ? publishedBy(turn.snapshot, turnContext as TurnContext, turn.calls)
      : new Map<string, ToolResultMessage>();
    if (committed) {
      results = toolCallsOf(assistant).flatMap((call) => published.get(call.id) ?? []);
    } else {
      results = toolCallsOf(assistant).map((call) => {
        const done = published.get(call.id);
        if (done) return done;
        const result: ToolResultMessage = {
          role: 'toolResult',
          toolCallId: call.id,
          toolName: call.name,
          content: `not run: ${detail}`,
          isError: true,
        };
        run.emit({
          type: 'toolExecutionEnd',
          turnIndex: turn.turnIndex,
          toolCallId: call.id,
          toolName: call.name,
          result: result.content,
          isError: true,
        });
        return result;
      });
      run.commit([assistant, ...results], turn.turnIndex);
    }
  }
  publishTurnEnd(run, { turnIndex: turn.turnIndex, reason: 'error', assistant, toolResults: results });
}

/** The results whose toolExecutionEnd is out, by call id: settled by tool-call actors, or done ones not settled yet. */
function publishedBy(
  snapshot: NonNullable<ReturnType<typeof openTurnOf>['turn']>['snapshot'] & object,
  context: TurnContext,
  calls: readonly AnyActorRef[],
) {
  const committed = snapshot.matches('RESPONSE') || snapshot.matches('done');
  const byId = new Map<string, ToolResultMessage>();
  for (const cell of settledByPosition(context.settled).values())
    if (committed || cell.published) byId.set(cell.result.toolCallId, cell.result);
  for (const call of calls) {
    const callSnapshot = call.getSnapshot() as { status: string; output?: ToolCallOutput };
    const result = callSnapshot.status === 'done' ? callSnapshot.output?.result : undefined;
    if (result && !byId.has(result.toolCallId)) byId.set(result.toolCallId, result);
  }
  return byId;
}

/** The messages of `candidates` not in `history` (by identity), in order. */
function notIn(history: readonly Message[], candidates: readonly Message[]): Message[] {
  if (candidates.length === 0) return [];
  const present = new Set<Message>(history);
  return candidates.filter((message) => !present.has(message));
}
