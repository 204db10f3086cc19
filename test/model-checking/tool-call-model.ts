import { toolCallMachine, type ToolCallContext } from '../../machines/tool-call.machine.js';
import type { ToolCallBlock } from '../../src/domain/messages.js';
import { activeDelays, activeInvocations, doneEvent, recorder, type Effect, type Environment, type Move, type Walk } from './harness/explore.js';
import type { Checks, Monitor } from './harness/paths.js';

/**
 * The tool-call machine's world. Event alphabet (every move, with its payload):
 * - `tool:ok`      done(executeTool) `{ content: 'ok', isError: false }` — the tool returned
 * - `tool:error`   done(executeTool) `{ content: 'file not found', isError: true }` — it returned an error result
 * - `tool:threw`   error(executeTool) `Error('disk on fire')` — it threw or rejected
 * - `cancel:steering` / `cancel:abort`   CANCEL with the text the batch writes for each reason
 * - `after(toolTimeout)`   the call's time limit on the clock (only for a call with `timeoutMs`)
 * Bounds: the machine is acyclic; `CANCEL` may be sent at most twice (a duplicate must be harmless).
 */

export const CALL: ToolCallBlock = { type: 'toolCall', id: 'call_1', name: 'read', arguments: { path: 'a.txt' } };
export const TIME_LIMIT_MS = 5_000;

export const provideToolCall = () =>
  toolCallMachine.provide({
    actions: {
      announceExecutionStart: recorder<ToolCallContext>('announceExecutionStart'),
      announceExecutionEnd: recorder<ToolCallContext>('announceExecutionEnd', (context) => context.result),
    },
  });

type ToolCallLogic = ReturnType<typeof provideToolCall>;
export interface ToolCallEnv {
  cancels: number;
}
type ToolCallWalk = Walk<ToolCallLogic, ToolCallEnv>;

export const toolCallEnvironment: Environment<ToolCallLogic, ToolCallEnv> = {
  initial: { cancels: 0 },
  moves: (walk) => {
    const moves: Move[] = [];
    for (const { id } of activeInvocations(walk.snapshot)) {
      moves.push({ label: 'tool:ok', event: doneEvent(id, { content: 'ok', isError: false }) });
      moves.push({ label: 'tool:error', event: doneEvent(id, { content: 'file not found', isError: true }) });
      moves.push({ label: 'tool:threw', event: { type: `xstate.error.actor.${id}`, error: new Error('disk on fire') } });
    }
    if (walk.env.cancels < 2) {
      moves.push({ label: 'cancel:steering', event: { type: 'CANCEL', result: 'cancelled: steering' } });
      moves.push({ label: 'cancel:abort', event: { type: 'CANCEL', result: 'aborted: the run was cancelled' } });
    }
    moves.push(...activeDelays(walk.snapshot));
    return moves;
  },
  remember: (env, move) => (move.event.type === 'CANCEL' ? { cancels: env.cancels + 1 } : env),
};

interface Observed {
  starts: number;
  ends: number;
}

const count = (effects: readonly Effect[], action: string) => effects.filter((effect) => effect.action === action).length;

/** One start, one end, at the end a result for this call whose error flag matches the final state. */
export const toolCallMonitor: Monitor<ToolCallLogic, ToolCallEnv, Observed> = {
  start: (walk, effects, checks) => step({ starts: 0, ends: 0 }, walk, effects, checks),
  step: (observed, _from, edge, to, checks) => step(observed, to, edge.effects, checks),
  end: (observed, last, checks) => {
    checks.that('every path ends in a final state', last.status === 'done', () => `ended ${last.status} in ${String(last.snapshot.value)}`);
    checks.that('one toolExecutionStart', observed.starts === 1, () => `${observed.starts}`);
    checks.that('one toolExecutionEnd', observed.ends === 1, () => `${observed.ends}`);
    const output = last.snapshot.output;
    checks.that('a result for the call', output?.result?.toolCallId === CALL.id && output.result.toolName === CALL.name && output.position === 0);
    const failed = last.snapshot.value !== 'succeeded';
    checks.that('isError ⇔ not succeeded', output?.result?.isError === failed, () => `${String(last.snapshot.value)} isError=${String(output?.result?.isError)}`);
    if (last.snapshot.value === 'timedOut') {
      checks.that('a timed-out call says after how long', output?.result?.content === `timed out after ${TIME_LIMIT_MS} ms`, () => String(output?.result?.content));
      checks.that('only a call with a time limit times out', last.snapshot.context.timeoutMs === TIME_LIMIT_MS);
    }
  },
};

function step(observed: Observed, walk: ToolCallWalk, effects: readonly Effect[], checks: Checks): Observed {
  const next = { starts: observed.starts + count(effects, 'announceExecutionStart'), ends: observed.ends + count(effects, 'announceExecutionEnd') };
  checks.that('toolExecutionStart at most once', next.starts <= 1);
  checks.that('toolExecutionEnd at most once, after the start', next.ends <= next.starts);
  checks.that('toolExecutionEnd only in a final state', next.ends === 0 || walk.status === 'done');
  return next;
}
