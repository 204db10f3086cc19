import { Agent, type AgentTool, type StreamFn } from '@mariozechner/pi-agent-core';
import {
  createAssistantMessageEventStream,
  Type,
  type AssistantMessage,
  type AssistantMessageEventStream,
  type Model,
  type ToolCall,
  type Usage,
} from '@mariozechner/pi-ai';
import {
  scriptedCallId,
  threePieces,
  turnsReplies,
  type ArgumentsKind,
  type Reply,
  type ReplyScript,
  type WorkDone,
} from './workload.js';

/**
 * pi's agent core (`@mariozechner/pi-agent-core`) on the benchmark workload: its `Agent` class as an
 * application uses it (`new Agent`, `await agent.prompt()`), default parallel tool execution, the
 * `noop` tool with a TypeBox schema (pi validates arguments with it on every call), and a `streamFn`
 * that replays the script instantly. Agent construction is outside the timed span, as for agentchart.
 */

const ZERO_USAGE: Usage = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

const MODEL: Model<'scripted'> = {
  id: 'scripted',
  name: 'scripted',
  api: 'scripted',
  provider: 'scripted',
  baseUrl: '',
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 100_000,
};

const noopTool: AgentTool = {
  name: 'noop',
  label: 'noop',
  description: 'Returns at once.',
  parameters: Type.Object({ i: Type.Number() }),
  // pi's tool contract is async; the body does no work.
  execute: async () => ({ content: [{ type: 'text', text: 'ok' }], details: {} }),
};

/**
 * The script as a pi stream: every event pushed at once (no timers), in the order a pi provider
 * emits them — `start`; the text as `text_start`, one `text_delta` per delta, `text_end`; per tool
 * call `toolcall_start`, the JSON arguments in three `toolcall_delta`s, `toolcall_end` with the
 * arguments parsed once; then `done`. `partial` is the one message being built, as pi's providers pass it.
 */
export function scriptedStreamFn(script: ReplyScript): StreamFn {
  let callIndex = 0;
  return () => {
    const index = callIndex++;
    const stream = createAssistantMessageEventStream();
    const reply = script(index);
    const output: AssistantMessage = {
      role: 'assistant',
      content: [],
      api: MODEL.api,
      provider: MODEL.provider,
      model: MODEL.id,
      usage: ZERO_USAGE,
      stopReason: 'stop',
      timestamp: Date.now(),
    };
    if (!reply) {
      const errorMessage = `pi scripted model: call #${index} is beyond the script`;
      stream.push({ type: 'error', reason: 'error', error: { ...output, stopReason: 'error', errorMessage } });
      return stream;
    }
    stream.push({ type: 'start', partial: output });
    if (reply.text.length > 0) streamText(stream, output, reply.text);
    if (reply.toolCalls.length > 0) streamToolCalls(stream, output, index, reply.toolCalls);
    output.stopReason = reply.toolCalls.length > 0 ? 'toolUse' : 'stop';
    stream.push({ type: 'done', reason: output.stopReason, message: output });
    return stream;
  };
}

function streamToolCalls(
  stream: AssistantMessageEventStream,
  output: AssistantMessage,
  callIndex: number,
  toolCalls: Reply['toolCalls'],
): void {
  toolCalls.forEach((call, i) => {
    const block: ToolCall = { type: 'toolCall', id: scriptedCallId(callIndex, i), name: call.name, arguments: {} };
    const contentIndex = output.content.push(block) - 1;
    stream.push({ type: 'toolcall_start', contentIndex, partial: output });
    const json = JSON.stringify(call.arguments);
    for (const delta of threePieces(json))
      stream.push({ type: 'toolcall_delta', contentIndex, delta, partial: output });
    block.arguments = JSON.parse(json) as Record<string, unknown>;
    stream.push({ type: 'toolcall_end', contentIndex, toolCall: block, partial: output });
  });
}

function streamText(stream: AssistantMessageEventStream, output: AssistantMessage, deltas: readonly string[]): void {
  const block = { type: 'text' as const, text: '' };
  const contentIndex = output.content.push(block) - 1;
  stream.push({ type: 'text_start', contentIndex, partial: output });
  for (const delta of deltas) {
    block.text += delta;
    stream.push({ type: 'text_delta', contentIndex, delta, partial: output });
  }
  stream.push({ type: 'text_end', contentIndex, content: block.text, partial: output });
}

/** A pi agent on `script` with `tools` (untimed). */
export function piAgent(script: ReplyScript, tools: AgentTool[] = [noopTool]): Agent {
  return new Agent({ initialState: { model: MODEL, tools }, streamFn: scriptedStreamFn(script) });
}

/** Builds the agent (untimed) and returns the timed part: one prompt, then the work read back from pi's transcript. */
export function preparePi(turns: number, calls: number, kind: ArgumentsKind = 'valid'): () => Promise<WorkDone> {
  const agent = piAgent(turnsReplies(turns, calls, kind));
  return async () => {
    await agent.prompt('go');
    return piWorkDone(agent);
  };
}

/** Turns = assistant messages; tool calls executed = tool results that are not errors (pi's own transcript). */
export function piWorkDone(agent: Agent): WorkDone {
  let turns = 0;
  let toolCallsExecuted = 0;
  let last: AssistantMessage | undefined;
  for (const message of agent.state.messages) {
    if (message.role === 'assistant') {
      turns++;
      last = message;
    } else if (message.role === 'toolResult' && !message.isError) {
      toolCallsExecuted++;
    }
  }
  const failed =
    agent.state.errorMessage ?? (last?.stopReason === 'stop' ? undefined : `stopReason ${last?.stopReason ?? 'none'}`);
  return { status: failed === undefined ? 'completed' : `failed: ${failed}`, turns, toolCallsExecuted };
}
