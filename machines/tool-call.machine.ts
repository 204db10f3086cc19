import {
  assertEvent,
  assign,
  fromPromise,
  setup,
  type ActorLogic,
  type ActorRefFrom,
  type ActorSystem,
  type AnyActorRef,
  type EventObject,
  type Snapshot,
} from 'xstate';
import type { ToolCallBlock, ToolResultMessage } from '../src/domain/messages.js';
import { errorResult, timedOutText } from './tool-results.js';

/**
 * One tool call, a child actor of its turn: starting → executing → succeeded | failed | cancelled |
 * timedOut, or starting → skipped (held by steering or cancelled before it started: no start event).
 *
 * A call starts once the step that created it is over (`awaitStep`): a steer or an abort accepted
 * during that step (from an event subscriber) reaches the turn first, which then holds or cancels
 * the calls that have not started. The tool runs in the `executeTool` effect with its own
 * AbortSignal, aborted when the call is cancelled, times out or is stopped; a throw inside the tool
 * becomes an error result in the runtime, it never escapes.
 *
 * `toolCallMachine` is the chart (drawn, inspected, model-checked). `toolCallLogic` runs it: a light
 * actor logic with the same states, events and effects, cheap enough to create one per call (a
 * full machine actor costs several times more per call). The model checking explores both with the
 * same alphabet and requires the same graph, so the two cannot drift apart.
 */

export interface ToolCallInput {
  turnIndex: number;
  position: number;
  call: ToolCallBlock;
  /** The tool's time limit (`defineTool({ timeoutMs })`, else `timeouts.toolMs`); null: none. */
  timeoutMs: number | null;
  /** A 'safe' call re-run after a restart: its toolExecutionStart was published before the crash. */
  announced: boolean;
}

/** The events of the chart: the turn's commands, and what its invoked effects and timer raise (XState's names). */
export type ToolCallEvent =
  | { type: 'CANCEL'; result: string }
  /** Steering: a call that has not started never starts (a started one runs on). */
  | { type: 'HOLD'; result: string }
  | { type: typeof STEP_ENDED }
  | { type: typeof TOOL_RETURNED; output: { content: string; isError: boolean } }
  | { type: typeof TOOL_THREW; error: unknown }
  | { type: typeof TIME_LIMIT };

export interface ToolCallOutput {
  position: number;
  result: ToolResultMessage;
  /** The tool was started (its toolExecutionStart is out); false for a call held or cancelled first. */
  started: boolean;
}

export interface ToolCallContext extends ToolCallInput {
  result: ToolResultMessage | null;
  /** The call left `starting`: its tool was started. */
  started: boolean;
}

export type ToolCallState = 'starting' | 'executing' | 'succeeded' | 'failed' | 'cancelled' | 'timedOut' | 'skipped';

export const STEP_ENDED = 'xstate.done.actor.awaitStep';
export const TOOL_RETURNED = 'xstate.done.actor.executeTool';
export const TOOL_THREW = 'xstate.error.actor.executeTool';
export const TIME_LIMIT = 'xstate.after.toolTimeout.toolCall.executing';

type AnyActorSystem = ActorSystem<any>;

const notProvided = (name: string) => () => {
  throw new Error(`agentchart: the runtime must provide the tool-call machine's "${name}"`);
};

/** The chart. Its effects are placeholders; at run time `toolCallLogic` plays it. */
export const toolCallMachine = setup({
  types: {
    context: {} as ToolCallContext,
    input: {} as ToolCallInput,
    events: {} as ToolCallEvent,
    output: {} as ToolCallOutput,
  },
  actors: {
    /** Done once the step that created the call is over. */
    awaitStep: fromPromise<void>(notProvided('awaitStep')),
    executeTool: fromPromise<
      { content: string; isError: boolean },
      Pick<ToolCallInput, 'turnIndex' | 'position' | 'call'>
    >(notProvided('executeTool')),
  },
  guards: {
    hasTimeLimit: ({ context }) => context.timeoutMs !== null,
    toolReportedError: ({ event }) => {
      assertEvent(event, TOOL_RETURNED);
      return event.output.isError;
    },
  },
  actions: {
    /** Publishes toolExecutionStart, unless a restart re-runs a call that already published it. */
    announceExecutionStart: notProvided('announceExecutionStart'),
    announceExecutionEnd: notProvided('announceExecutionEnd'),
  },
  delays: {
    /** On the agent's clock (a SimulatedClock in tests). */
    toolTimeout: ({ context }) => context.timeoutMs ?? 0,
  },
}).createMachine({
  id: 'toolCall',
  context: ({ input }) => ({ ...input, result: null, started: false }),
  initial: 'starting',
  states: {
    starting: {
      invoke: {
        id: 'awaitStep',
        src: 'awaitStep',
        onDone: { target: 'executing', actions: assign({ started: true }) },
      },
      on: {
        HOLD: { target: 'skipped', actions: assign({ result: ({ context, event }) => commanded(context, event) }) },
        CANCEL: { target: 'skipped', actions: assign({ result: ({ context, event }) => commanded(context, event) }) },
      },
    },
    executing: {
      entry: 'announceExecutionStart',
      invoke: {
        id: 'executeTool',
        src: 'executeTool',
        input: ({ context }) => ({ turnIndex: context.turnIndex, position: context.position, call: context.call }),
        onDone: [
          {
            guard: 'toolReportedError',
            target: 'failed',
            actions: assign({ result: ({ context, event }) => returned(context, event) }),
          },
          { target: 'succeeded', actions: assign({ result: ({ context, event }) => returned(context, event) }) },
        ],
        onError: { target: 'failed', actions: assign({ result: ({ context, event }) => threw(context, event) }) },
      },
      after: { toolTimeout: { guard: 'hasTimeLimit', target: 'timedOut' } },
      on: {
        CANCEL: { target: 'cancelled', actions: assign({ result: ({ context, event }) => commanded(context, event) }) },
      },
    },
    succeeded: { type: 'final', entry: 'announceExecutionEnd' },
    failed: { type: 'final', entry: 'announceExecutionEnd' },
    cancelled: { type: 'final', entry: 'announceExecutionEnd' },
    timedOut: {
      type: 'final',
      entry: [assign({ result: ({ context }) => timedOut(context) }), 'announceExecutionEnd'],
    },
    /** Never started: held by steering or cancelled first; its result is still published (parity). */
    skipped: { type: 'final', entry: 'announceExecutionEnd' },
  },
  output: ({ context }) => outputOf(context),
});

type AnyEvent = { type: string };
const returned = (context: ToolCallContext, event: AnyEvent): ToolResultMessage => {
  const { content, isError } = (event as Extract<ToolCallEvent, { type: typeof TOOL_RETURNED }>).output;
  return resultOf(context.call, content, isError);
};
const threw = (context: ToolCallContext, event: AnyEvent): ToolResultMessage =>
  errorResult(context.call, String((event as Extract<ToolCallEvent, { type: typeof TOOL_THREW }>).error));
const commanded = (context: ToolCallContext, event: AnyEvent): ToolResultMessage =>
  errorResult(context.call, (event as Extract<ToolCallEvent, { type: 'CANCEL' | 'HOLD' }>).result);
const timedOut = (context: ToolCallContext): ToolResultMessage =>
  errorResult(context.call, timedOutText(context.timeoutMs ?? 0));

function resultOf(call: ToolCallBlock, content: string, isError: boolean): ToolResultMessage {
  return { role: 'toolResult', toolCallId: call.id, toolName: call.name, content, isError };
}

function outputOf(context: ToolCallContext): ToolCallOutput {
  return { position: context.position, result: context.result as ToolResultMessage, started: context.started };
}

/** What a tool-call actor is at a point in time: the chart's state value and context. */
export type ToolCallSnapshot = Snapshot<ToolCallOutput> & { value: ToolCallState; context: ToolCallContext };

/** The effects `src/runtime` provides: the same names as the chart's actions and invoked actors. */
export interface ToolCallEffects {
  announceExecutionStart(args: { context: ToolCallContext; system: AnyActorSystem }): void;
  announceExecutionEnd(args: { context: ToolCallContext; system: AnyActorSystem }): void;
  /** Calls `done` once the step that created the call is over. */
  awaitStep(args: { system: AnyActorSystem; done(): void }): void;
  /**
   * Runs the tool and reports how it went through `settle` (its result) or `fail` (it threw): the
   * way XState's promise actors report, without a promise per call when the tool answers at once.
   */
  executeTool(args: {
    input: Pick<ToolCallInput, 'turnIndex' | 'position' | 'call'>;
    signal: AbortSignal;
    system: AnyActorSystem;
    settle(output: { content: string; isError: boolean }): void;
    fail(error: unknown): void;
  }): void;
}

export type ToolCallLogic = ActorLogic<ToolCallSnapshot, ToolCallEvent, ToolCallInput, AnyActorSystem, EventObject> & {
  /** The chart this logic plays: what the inspector and the trace viewer draw. */
  readonly id: 'toolCall';
  readonly root: (typeof toolCallMachine)['root'];
};
export type ToolCallActor = ActorRefFrom<ToolCallLogic>;

const STOP = 'xstate.stop';

/**
 * The tool-call chart as a light actor logic: one object per call, no interpreter. Each event is
 * handled as the chart handles it; `effects` are the chart's actions and its invoked actors.
 */
export function toolCallLogic(effects: ToolCallEffects): ToolCallLogic {
  // The AbortController of each executing call (like XState's promise actors keep theirs); an entry goes with its
  // actor (a finished call's actor is dropped), so none is deleted by hand.
  const controllers = new WeakMap<AnyActorRef, AbortController>();
  type Scope = { self: AnyActorRef; system: AnyActorSystem };
  const send = (self: AnyActorRef, event: ToolCallEvent) => {
    // Stryker disable next-line ConditionalExpression: spares a send; `transition` ignores a finished call's events
    if ((self.getSnapshot() as ToolCallSnapshot).status === 'active') self.send(event);
  };
  const end = (
    snapshot: ToolCallSnapshot,
    value: ToolCallState,
    result: ToolResultMessage,
    scope: Scope,
  ): ToolCallSnapshot => {
    // The tool's signal is aborted when the call ends before its tool did (cancelled, timed out).
    if (value === 'cancelled' || value === 'timedOut') controllers.get(scope.self)?.abort();
    const context = { ...snapshot.context, result };
    effects.announceExecutionEnd({ context, system: scope.system });
    return { status: 'done', output: outputOf(context), error: undefined, value, context };
  };
  const execute = (snapshot: ToolCallSnapshot, scope: Scope): ToolCallSnapshot => {
    const { self, system } = scope;
    const context = { ...snapshot.context, started: true };
    effects.announceExecutionStart({ context, system });
    // Stryker disable next-line ConditionalExpression: spares a timer; without a limit TIME_LIMIT is ignored anyway
    if (context.timeoutMs !== null)
      system.scheduler.schedule(self, self, { type: TIME_LIMIT }, context.timeoutMs, TIME_LIMIT);
    const controller = new AbortController();
    controllers.set(self, controller);
    const input = { turnIndex: context.turnIndex, position: context.position, call: context.call };
    try {
      effects.executeTool({
        input,
        signal: controller.signal,
        system,
        settle: (output) => send(self, { type: TOOL_RETURNED, output }),
        fail: (error) => send(self, { type: TOOL_THREW, error }),
      });
    } catch (error) {
      send(self, { type: TOOL_THREW, error });
    }
    return { ...snapshot, value: 'executing', context };
  };
  const logic: ToolCallLogic = {
    id: 'toolCall',
    root: toolCallMachine.root,
    config: toolCallMachine.config,
    getInitialSnapshot: (_scope, input) => ({
      status: 'active',
      output: undefined,
      error: undefined,
      value: 'starting',
      context: { ...input, result: null, started: false },
    }),
    start: (snapshot, { self, system }) => {
      if (snapshot.status !== 'active') return;
      effects.awaitStep({ system, done: () => send(self, { type: STEP_ENDED }) });
    },
    transition: (snapshot, event, scope) => {
      if (snapshot.status !== 'active') return snapshot;
      const { context } = snapshot;
      if (snapshot.value === 'starting') {
        switch (event.type) {
          case STEP_ENDED:
            return execute(snapshot, scope);
          case 'HOLD':
          case 'CANCEL':
            return end(snapshot, 'skipped', commanded(context, event), scope);
        }
      } else {
        switch (event.type) {
          case TOOL_RETURNED:
            return end(snapshot, event.output.isError ? 'failed' : 'succeeded', returned(context, event), scope);
          case TOOL_THREW:
            return end(snapshot, 'failed', threw(context, event), scope);
          case 'CANCEL':
            return end(snapshot, 'cancelled', commanded(context, event), scope);
          case TIME_LIMIT:
            return context.timeoutMs === null ? snapshot : end(snapshot, 'timedOut', timedOut(context), scope);
        }
      }
      if ((event as { type: string }).type === STOP) {
        controllers.get(scope.self)?.abort();
        return { ...snapshot, status: 'stopped', output: undefined, error: undefined };
      }
      return snapshot;
    },
    getPersistedSnapshot: (snapshot) => snapshot,
  };
  return logic;
}
