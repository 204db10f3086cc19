import { assign, fromPromise, setup } from 'xstate';
import type { ToolCallBlock, ToolResultMessage } from '../src/domain/messages.js';
import { timedOutText } from './tool-results.js';

/**
 * One tool call, spawned per prepared call: executing → succeeded | failed | cancelled | timedOut.
 * The tool runs in the `executeTool` actor with its own AbortSignal (leaving `executing` stops the
 * actor, which aborts it). A throw inside the tool becomes an error result in the runtime's
 * `executeTool`; it never escapes. A call with a time limit that runs past it is aborted.
 */

export interface ToolCallInput {
  position: number;
  call: ToolCallBlock;
  /** The tool's time limit (`defineTool({ timeoutMs })`, else `timeouts.toolMs`); null: none. */
  timeoutMs: number | null;
}

export type ToolCallEvent = { type: 'CANCEL'; result: string };

export interface ToolCallOutput {
  position: number;
  result: ToolResultMessage;
}

export interface ToolCallContext extends ToolCallInput {
  result: ToolResultMessage | null;
}

const notProvided = (name: string) => () => {
  throw new Error(`agentchart: the runtime must provide the tool-call machine's "${name}"`);
};

export const toolCallMachine = setup({
  types: {
    context: {} as ToolCallContext,
    input: {} as ToolCallInput,
    events: {} as ToolCallEvent,
    output: {} as ToolCallOutput,
  },
  actors: {
    executeTool: fromPromise<{ content: string; isError: boolean }, Pick<ToolCallInput, 'position' | 'call'>>(
      notProvided('executeTool'),
    ),
  },
  guards: {
    hasTimeLimit: ({ context }) => context.timeoutMs !== null,
  },
  actions: {
    announceExecutionStart: notProvided('announceExecutionStart'),
    announceExecutionEnd: notProvided('announceExecutionEnd'),
  },
  delays: {
    /** On the agent's clock (a SimulatedClock in tests). */
    toolTimeout: ({ context }) => context.timeoutMs ?? 0,
  },
}).createMachine({
  id: 'toolCall',
  context: ({ input }) => ({ ...input, result: null }),
  initial: 'executing',
  states: {
    executing: {
      entry: 'announceExecutionStart',
      invoke: {
        src: 'executeTool',
        input: ({ context }) => ({ position: context.position, call: context.call }),
        onDone: [
          {
            guard: ({ event }) => event.output.isError,
            target: 'failed',
            actions: assign({ result: ({ context, event }) => resultOf(context.call, event.output.content, true) }),
          },
          {
            target: 'succeeded',
            actions: assign({ result: ({ context, event }) => resultOf(context.call, event.output.content, false) }),
          },
        ],
        onError: {
          target: 'failed',
          actions: assign({ result: ({ context, event }) => resultOf(context.call, String(event.error), true) }),
        },
      },
      initial: 'running',
      states: {
        /** Without a time limit the call runs until it settles or is cancelled. */
        running: {
          always: { guard: 'hasTimeLimit', target: 'timeLimited' },
        },
        /** The time limit runs on the agent's clock; past it the call is aborted. */
        timeLimited: {
          after: { toolTimeout: { target: '#toolCall.timedOut' } },
        },
      },
      on: {
        CANCEL: {
          target: 'cancelled',
          actions: assign({ result: ({ context, event }) => resultOf(context.call, event.result, true) }),
        },
      },
    },
    succeeded: { type: 'final', entry: 'announceExecutionEnd' },
    failed: { type: 'final', entry: 'announceExecutionEnd' },
    cancelled: { type: 'final', entry: 'announceExecutionEnd' },
    timedOut: {
      type: 'final',
      entry: [
        assign({ result: ({ context }) => resultOf(context.call, timedOutText(context.timeoutMs ?? 0), true) }),
        'announceExecutionEnd',
      ],
    },
  },
  output: ({ context }) => ({ position: context.position, result: context.result as ToolResultMessage }),
});

function resultOf(call: ToolCallBlock, content: string, isError: boolean): ToolResultMessage {
  return { role: 'toolResult', toolCallId: call.id, toolName: call.name, content, isError };
}
