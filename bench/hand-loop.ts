import {
  toolCallsOf,
  type AgentEvent,
  type AnyTool,
  type Counters,
  type Message,
  type Model,
  type RunStatus,
  type ToolCallBlock,
  type ToolResultMessage,
} from 'agentchart';
import {
  createToolRegistry,
  prepareToolCall,
  runTool,
  StreamAccumulator,
  zeroCounters,
  type AgentEventBody,
  type MessageDelta,
} from 'agentchart/model-kit';

/**
 * The baseline: a plain async loop doing the bookkeeping agentchart does on the happy path —
 * the same events (with runId and seq, kept in a replayable log and fanned out to listeners), the
 * same counters, the same stream accumulator and argument validation — with no statechart:
 * append the assistant message, run the tools with Promise.all, append the results, loop.
 * What it leaves out (policies, approval, steering, retries, fallback, overflow recovery) costs
 * nothing on this path in a hand-written loop, which is the point of the comparison.
 */

export interface HandLoopOptions {
  model: Model;
  tools: AnyTool[];
  systemPrompt?: string;
  signal?: AbortSignal;
  /** Called with every event as it is published. */
  onEvent?: (event: AgentEvent) => void;
}

export interface HandLoopResult {
  status: RunStatus;
  messages: Message[];
  counters: Counters;
  events: AgentEvent[];
}

let runs = 0;

export async function handLoop(prompt: string, options: HandLoopOptions): Promise<HandLoopResult> {
  const { model, onEvent } = options;
  const signal = options.signal ?? new AbortController().signal;
  const registry = createToolRegistry(options.tools);
  const runId = `hand_${++runs}`;
  const events: AgentEvent[] = [];
  const counters = zeroCounters();
  const history: Message[] = [{ role: 'user', content: prompt }];
  let seq = 0;

  const emit = (body: AgentEventBody): void => {
    const event = { ...body, runId, seq: seq++ } as AgentEvent;
    events.push(event);
    onEvent?.(event);
  };

  emit({ type: 'agentStart' });
  let status: RunStatus = 'completed';
  for (let turnIndex = 0; ; turnIndex++) {
    emit({ type: 'turnStart', turnIndex });
    counters.modelCalls++;
    emit({ type: 'beforeModelCall', turnIndex, model: model.name, messages: history });
    const accumulator = new StreamAccumulator(model.name);
    const deltas: MessageDelta[] = [];
    for await (const event of model.stream(
      { systemPrompt: options.systemPrompt, messages: history, tools: registry.specs() },
      { signal },
    )) {
      deltas.push(...accumulator.push(event));
      if (accumulator.terminal) break;
    }
    const assistant = accumulator.finish();
    emit({
      type: 'messageStart',
      turnIndex,
      message: { role: 'assistant', content: [], stopReason: 'stop', model: model.name },
    });
    for (const delta of deltas) emit({ type: 'messageUpdate', turnIndex, delta });
    emit({ type: 'messageEnd', turnIndex, message: assistant });
    history.push(assistant);

    const calls = toolCallsOf(assistant);
    counters.toolCallsRequested += calls.length;
    const invalid = new Map(accumulator.invalidToolCalls.map((call) => [call.id, call]));
    const results = await Promise.all(calls.map((call) => runCall(call, turnIndex)));
    history.push(...results);
    counters.turns++;

    if (assistant.stopReason === 'aborted') {
      emit({ type: 'turnEnd', turnIndex, reason: 'aborted', assistant, toolResults: results });
      status = 'aborted';
      break;
    }
    emit({
      type: 'turnEnd',
      turnIndex,
      reason: calls.length > 0 ? 'toolsExecuted' : 'complete',
      assistant,
      toolResults: results,
    });
    if (calls.length === 0) break;

    async function runCall(call: ToolCallBlock, turnIndex: number): Promise<ToolResultMessage> {
      const raw = invalid.get(call.id);
      const prepared = prepareToolCall(
        registry,
        call,
        raw ? { rawArguments: raw.rawArguments, invalidReason: raw.reason } : undefined,
      );
      const base = { toolCallId: call.id, toolName: call.name };
      if (!prepared.ok) {
        counters.toolCallsInvalid++;
        emit({ type: 'toolExecutionEnd', turnIndex, ...base, result: prepared.message, isError: true });
        return { role: 'toolResult', ...base, content: prepared.message, isError: true };
      }
      counters.toolCallsExecuted++;
      emit({ type: 'toolExecutionStart', turnIndex, ...base, arguments: prepared.arguments });
      const outcome = await runTool(prepared.tool, prepared.arguments, {
        toolCallId: call.id,
        signal,
        idempotencyKey: `${runId}:${call.id}`,
        update: (partial) => {
          emit({ type: 'toolExecutionUpdate', turnIndex, ...base, partial });
          return Promise.resolve();
        },
      });
      if (outcome.isError) counters.toolCallsFailed++;
      emit({ type: 'toolExecutionEnd', turnIndex, ...base, result: outcome.content, isError: outcome.isError });
      return { role: 'toolResult', ...base, content: outcome.content, isError: outcome.isError };
    }
  }
  emit({
    type: 'agentEnd',
    status,
    endReason: status === 'aborted' ? 'aborted' : 'naturalEnd',
    messages: history.slice(),
    counters: { ...counters },
  });
  return { status, messages: history, counters, events };
}
