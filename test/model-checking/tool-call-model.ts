import type { ActorSystem, AnyActorRef, AnyEventObject } from 'xstate';
import {
  STEP_ENDED,
  TIME_LIMIT,
  TOOL_RETURNED,
  TOOL_THREW,
  toolCallLogic,
  toolCallMachine,
  type ToolCallContext,
  type ToolCallEvent,
  type ToolCallInput,
  type ToolCallSnapshot,
} from '../../machines/tool-call.machine.js';
import type { ToolCallBlock } from '../../src/domain/messages.js';
import {
  activeDelays,
  activeInvocations,
  doneEvent,
  recorder,
  type Effect,
  type Environment,
  type Move,
  type Walk,
} from './harness/explore.js';
import type { Checks, Monitor } from './harness/paths.js';

/**
 * The tool-call chart's world. Event alphabet (every move, with its payload):
 * - `step:ended`   done(awaitStep) — the step that created the call is over: it starts
 * - `tool:ok`      done(executeTool) `{ content: 'ok', isError: false }` — the tool returned
 * - `tool:error`   done(executeTool) `{ content: 'file not found', isError: true }` — it returned an error result
 * - `tool:threw`   error(executeTool) `Error('disk on fire')` — it threw or rejected
 * - `hold`         HOLD (steering): a call that has not started never starts
 * - `cancel:steering` / `cancel:abort`   CANCEL with the text the turn writes for each reason
 * - `after(toolTimeout)`   the call's time limit on the clock (only for a call with `timeoutMs`)
 * Bounds: the chart is acyclic; `CANCEL` may be sent at most twice, `HOLD` once (a duplicate must be harmless).
 */

export const CALL: ToolCallBlock = { type: 'toolCall', id: 'call_1', name: 'read', arguments: { path: 'a.txt' } };
export const TIME_LIMIT_MS = 5_000;

export const callInput = (timeoutMs: number | null): ToolCallInput => ({
  turnIndex: 0,
  position: 0,
  call: CALL,
  timeoutMs,
  announced: false,
});

export const provideToolCall = () =>
  toolCallMachine.provide({
    actions: {
      announceExecutionStart: recorder<ToolCallContext>('announceExecutionStart'),
      announceExecutionEnd: recorder<ToolCallContext>('announceExecutionEnd', (context) => context.result),
    },
  });

type ToolCallChart = ReturnType<typeof provideToolCall>;
export interface ToolCallEnv {
  cancels: number;
  holds: number;
}
type ToolCallWalk = Walk<ToolCallChart, ToolCallEnv>;

/** The commands of the turn and the outcomes of the tool, by label: one alphabet for the chart and the light logic. */
export const ALPHABET: Record<string, ToolCallEvent> = {
  'step:ended': { type: STEP_ENDED },
  'tool:ok': { type: TOOL_RETURNED, output: { content: 'ok', isError: false } },
  'tool:error': { type: TOOL_RETURNED, output: { content: 'file not found', isError: true } },
  'tool:threw': { type: TOOL_THREW, error: new Error('disk on fire') },
  hold: { type: 'HOLD', result: 'skipped: steering' },
  'cancel:steering': { type: 'CANCEL', result: 'cancelled: steering' },
  'cancel:abort': { type: 'CANCEL', result: 'aborted: the run was cancelled' },
  'after(toolTimeout)': { type: TIME_LIMIT },
};

const commands = (env: ToolCallEnv): Move[] => [
  ...(env.holds < 1 ? [{ label: 'hold', event: ALPHABET.hold as AnyEventObject }] : []),
  ...(env.cancels < 2
    ? [
        { label: 'cancel:steering', event: ALPHABET['cancel:steering'] as AnyEventObject },
        { label: 'cancel:abort', event: ALPHABET['cancel:abort'] as AnyEventObject },
      ]
    : []),
];

export const toolCallEnvironment: Environment<ToolCallChart, ToolCallEnv> = {
  initial: { cancels: 0, holds: 0 },
  moves: (walk) => {
    const moves: Move[] = [];
    for (const { id } of activeInvocations(walk.snapshot)) {
      if (id === 'awaitStep') moves.push({ label: 'step:ended', event: doneEvent(id, undefined) });
      if (id !== 'executeTool') continue;
      moves.push({ label: 'tool:ok', event: doneEvent(id, { content: 'ok', isError: false }) });
      moves.push({ label: 'tool:error', event: doneEvent(id, { content: 'file not found', isError: true }) });
      moves.push({
        label: 'tool:threw',
        event: { type: `xstate.error.actor.${id}`, error: new Error('disk on fire') },
      });
    }
    moves.push(...commands(walk.env));
    moves.push(...activeDelays(walk.snapshot));
    return moves;
  },
  remember: (env, move) => ({
    cancels: env.cancels + (move.event.type === 'CANCEL' ? 1 : 0),
    holds: env.holds + (move.event.type === 'HOLD' ? 1 : 0),
  }),
};

interface Observed {
  starts: number;
  ends: number;
}

const count = (effects: readonly Effect[], action: string) =>
  effects.filter((effect) => effect.action === action).length;

/** One end; a start exactly when the tool was started; at the end a result for this call whose error flag matches the final state. */
export const toolCallMonitor: Monitor<ToolCallChart, ToolCallEnv, Observed> = {
  start: (walk, effects, checks) => step({ starts: 0, ends: 0 }, walk, effects, checks),
  step: (observed, _from, edge, to, checks) => step(observed, to, edge.effects, checks),
  end: (observed, last, checks) => {
    checks.that(
      'every path ends in a final state',
      last.status === 'done',
      () => `ended ${last.status} in ${String(last.snapshot.value)}`,
    );
    const skipped = last.snapshot.value === 'skipped';
    checks.that(
      'one toolExecutionStart, unless the call never started',
      observed.starts === (skipped ? 0 : 1),
      () => `${observed.starts}`,
    );
    checks.that('one toolExecutionEnd', observed.ends === 1, () => `${observed.ends}`);
    const output = last.snapshot.output;
    checks.that(
      'a result for the call',
      output?.result?.toolCallId === CALL.id && output.result.toolName === CALL.name && output.position === 0,
    );
    checks.that('the output says whether the tool started', output?.started === !skipped);
    const failed = last.snapshot.value !== 'succeeded';
    checks.that(
      'isError ⇔ not succeeded',
      output?.result?.isError === failed,
      () => `${String(last.snapshot.value)} isError=${String(output?.result?.isError)}`,
    );
    if (last.snapshot.value === 'timedOut') {
      checks.that(
        'a timed-out call says after how long',
        output?.result?.content === `timed out after ${TIME_LIMIT_MS} ms`,
        () => String(output?.result?.content),
      );
      checks.that('only a call with a time limit times out', last.snapshot.context.timeoutMs === TIME_LIMIT_MS);
    }
  },
};

function step(observed: Observed, walk: ToolCallWalk, effects: readonly Effect[], checks: Checks): Observed {
  const next = {
    starts: observed.starts + count(effects, 'announceExecutionStart'),
    ends: observed.ends + count(effects, 'announceExecutionEnd'),
  };
  checks.that('toolExecutionStart at most once', next.starts <= 1);
  checks.that('toolExecutionEnd at most once', next.ends <= 1);
  checks.that('toolExecutionEnd only in a final state', next.ends === 0 || walk.status === 'done');
  return next;
}

/**
 * The light actor logic's own state graph under the same alphabet, with the effects it called
 * (recorded under the chart's action names): what the equivalence check compares to the chart.
 */
export function exploreLogic(
  input: ToolCallInput,
): Map<string, { snapshot: ToolCallSnapshot; edges: Map<string, { to: string; effects: string[] }> }> {
  let effects: string[] = [];
  const logic = toolCallLogic({
    announceExecutionStart: () => void effects.push('announceExecutionStart'),
    announceExecutionEnd: () => void effects.push('announceExecutionEnd'),
    awaitStep: () => {},
    executeTool: () => {},
  });
  const self = { getSnapshot: () => ({ status: 'active' }), send: () => {} } as unknown as AnyActorRef;
  const system = { scheduler: { schedule: () => {}, cancel: () => {} } } as unknown as ActorSystem<any>;
  const scope = {
    self,
    system,
    id: 'call',
    sessionId: 'call',
    logger: () => {},
    defer: () => {},
    emit: () => {},
    stopChild: () => {},
    actionExecutor: () => {},
  };
  const keyOf = (snapshot: ToolCallSnapshot) =>
    JSON.stringify([snapshot.value, snapshot.status, snapshot.context.result, snapshot.context.started]);
  const graph = new Map<
    string,
    { snapshot: ToolCallSnapshot; edges: Map<string, { to: string; effects: string[] }> }
  >();
  const initial = logic.getInitialSnapshot(scope as never, input);
  const queue: Array<{ snapshot: ToolCallSnapshot; env: ToolCallEnv }> = [
    { snapshot: initial, env: { cancels: 0, holds: 0 } },
  ];
  while (queue.length > 0) {
    const { snapshot, env } = queue.shift() as { snapshot: ToolCallSnapshot; env: ToolCallEnv };
    const key = `${keyOf(snapshot)}|${JSON.stringify(env)}`;
    if (graph.has(key)) continue;
    const edges = new Map<string, { to: string; effects: string[] }>();
    graph.set(key, { snapshot, edges });
    if (snapshot.status !== 'active') continue;
    for (const [label, event] of Object.entries(ALPHABET)) {
      if (label === 'hold' && env.holds >= 1) continue;
      if (label.startsWith('cancel:') && env.cancels >= 2) continue;
      effects = [];
      const next = logic.transition(snapshot, event, scope as never);
      const nextEnv = {
        cancels: env.cancels + (event.type === 'CANCEL' ? 1 : 0),
        holds: env.holds + (event.type === 'HOLD' ? 1 : 0),
      };
      edges.set(label, { to: `${keyOf(next)}|${JSON.stringify(nextEnv)}`, effects });
      queue.push({ snapshot: next, env: nextEnv });
    }
  }
  return graph;
}
