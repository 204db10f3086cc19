import { assign, fromPromise, setup } from 'xstate';
import type { ToolCallBlock, ToolResultMessage } from '../src/domain/messages.js';

/**
 * One tool call, spawned per prepared call: executing → succeeded | failed | cancelled.
 * The tool runs in the `executeTool` actor with its own AbortSignal (stopping the actor aborts it).
 * A throw inside the tool becomes an error result in the runtime's `executeTool`; it never escapes.
 */

export interface ToolCallInput {
  position: number;
  call: ToolCallBlock;
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
    executeTool: fromPromise<{ content: string; isError: boolean }, ToolCallInput>(notProvided('executeTool')),
  },
  actions: {
    announceExecutionStart: notProvided('announceExecutionStart'),
    announceExecutionEnd: notProvided('announceExecutionEnd'),
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
  },
  output: ({ context }) => ({ position: context.position, result: context.result as ToolResultMessage }),
});

function resultOf(call: ToolCallBlock, content: string, isError: boolean): ToolResultMessage {
  return { role: 'toolResult', toolCallId: call.id, toolName: call.name, content, isError };
}
