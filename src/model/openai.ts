import type OpenAI from 'openai';
import { AgentError, modelError, type ModelError } from '../domain/errors.js';
import { knownSecrets } from '../domain/redact.js';
import type { Usage } from '../domain/messages.js';
import {
  abortReasonText,
  classifyProviderFailure,
  classifyTransportFailure,
  noStreamEvents,
  streamEndedEarly,
} from './classify-http.js';
import type { Model, ModelRequest, ModelStreamEvent } from './port.js';
import { assertInstalled, lazyPackage, type OptionalPackage } from '../peers/optional-sdk.js';
import { lazyClient, readEnv, sdkClientOptions, sdkModel, type SdkModelOptions } from './sdk-model.js';
import { assistantParts, providerMessages } from './provider-messages.js';

type ChatChunk = OpenAI.Chat.Completions.ChatCompletionChunk;
type ChatMessageParam = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ChatStreamParams = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;

/** Request parameters the adapter passes through untouched (temperature, max_completion_tokens, reasoning_effort, …). */
export type OpenAIRequestExtras = Partial<
  Omit<ChatStreamParams, 'model' | 'messages' | 'tools' | 'stream' | 'stream_options'>
>;

export interface OpenAICompatibleOptions extends SdkModelOptions {
  /** The model id the server knows (`gpt-4o-mini`, `llama3.1:8b`, …). */
  model: string;
  /** `https://api.openai.com/v1` by default (or `OPENAI_BASE_URL`); any OpenAI-compatible server's `/v1` URL. */
  baseURL?: string;
  /**
   * Falls back to `OPENAI_API_KEY`. Without either, a `baseURL` (or `OPENAI_BASE_URL`) server is
   * called with no Authorization header: local servers (Ollama, vLLM, llama.cpp) need no key.
   */
  apiKey?: string;
  body?: OpenAIRequestExtras;
}

const OPENAI: OptionalPackage = { name: 'openai', range: '^6 || ^7', neededBy: 'agentchart/openai' };
const loadOpenAI = lazyPackage(OPENAI, async () => (await import('openai')).default);

/**
 * A Model on the official `openai` client, speaking Chat Completions with SSE streaming. Works with
 * any OpenAI-compatible server (vLLM, Ollama, llama.cpp server, LM Studio). The client's own
 * retries are off: retries belong to the master loop only. Throws `AgentError('MissingDependency')`
 * when `openai` is not installed, `AgentError('InvalidOptions')` when there is neither a key nor a server.
 */
export function openAICompatible(options: OpenAICompatibleOptions): Model {
  assertInstalled(OPENAI);
  const clientOptions = openAIClientOptions(options);
  const sdk = lazyClient('openAICompatible', loadOpenAI, (OpenAIClient) => new OpenAIClient(clientOptions));
  return sdkModel(options, {
    provider: 'openai',
    open: async (request, signal) =>
      (await sdk.client()).chat.completions.create(chatRequest(options, request), { signal, maxRetries: 0 }),
    mapper: () => new ChunkMapper(),
    classify: (error, signal) => classifyOpenAIError(sdk.sdk(), error, signal),
    secrets: knownSecrets([options.apiKey ?? readEnv('OPENAI_API_KEY')], options.headers),
  });
}

/** The client's options; with no key anywhere, a given server is called without an Authorization header. */
function openAIClientOptions(options: OpenAICompatibleOptions) {
  const clientOptions = sdkClientOptions(options);
  if (options.apiKey || readEnv('OPENAI_API_KEY')) return clientOptions;
  if (!options.baseURL && !readEnv('OPENAI_BASE_URL')) {
    throw new AgentError(
      'InvalidOptions',
      'openAICompatible: no API key: pass apiKey or set OPENAI_API_KEY (a local server given by baseURL needs none).',
    );
  }
  // The client insists on a credential; the null header drops it from every request (a given header still wins).
  const defaultHeaders = { Authorization: null, ...clientOptions.defaultHeaders };
  return { ...clientOptions, apiKey: 'no-key', defaultHeaders };
}

function chatRequest(
  options: Pick<OpenAICompatibleOptions, 'model' | 'body'>,
  request: ModelRequest,
): ChatStreamParams {
  const tools = request.tools.map((tool) => ({
    type: 'function' as const,
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
  return {
    ...options.body,
    model: options.model,
    messages: chatMessages(request),
    stream: true,
    stream_options: { include_usage: true },
    // Several compatible servers reject an empty `tools` array.
    ...(tools.length > 0 ? { tools } : {}),
  };
}

function chatMessages(request: ModelRequest): ChatMessageParam[] {
  const out: ChatMessageParam[] = [];
  if (request.systemPrompt) out.push({ role: 'system', content: request.systemPrompt });
  for (const message of providerMessages(request.messages)) {
    if (message.role === 'user') {
      out.push({ role: 'user', content: message.content });
    } else if (message.role === 'toolResult') {
      out.push({ role: 'tool', tool_call_id: message.toolCallId, content: message.content });
    } else {
      const { text, toolCalls } = assistantParts(message);
      if (text === '' && toolCalls.length === 0) continue;
      out.push({
        role: 'assistant',
        content: text === '' ? null : text,
        ...(toolCalls.length > 0
          ? {
              tool_calls: toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: JSON.stringify(call.arguments) },
              })),
            }
          : {}),
      });
    }
  }
  return out;
}

function classifyOpenAIError(
  OpenAI: typeof import('openai').default | undefined,
  error: unknown,
  signal: AbortSignal,
): ModelError {
  if (signal.aborted) return modelError('aborted', abortReasonText(signal));
  if (OpenAI === undefined) return classifyTransportFailure(error, signal); // the SDK did not load
  if (error instanceof OpenAI.APIConnectionTimeoutError) return modelError('timeout', error.message);
  if (
    error instanceof OpenAI.APIError &&
    !(error instanceof OpenAI.APIConnectionError) &&
    !(error instanceof OpenAI.APIUserAbortError)
  ) {
    return classifyProviderFailure({
      status: error.status,
      headers: error.headers,
      message: error.message,
      codes: [error.code, error.type],
    });
  }
  return classifyTransportFailure(error, signal);
}

interface ToolCallState {
  id: string | undefined;
  name: string;
  started: boolean;
  ended: boolean;
  /** Argument fragments that arrived before the call's name. */
  pending: string;
}

/**
 * Chat Completions chunks → ModelStreamEvents. Tool calls are keyed by `tool_calls[].index`; OpenAI
 * never marks a single call's end, so all end at `finish_reason`. Usage comes in a chunk after the
 * finish reason (`include_usage`), so `usage` and `done` are emitted when the stream ends.
 */
class ChunkMapper {
  private started = false;
  private finishReason: string | null = null;
  private usage: Usage | undefined;
  private readonly toolCalls = new Map<number, ToolCallState>();
  /** Tool-call events produced while reading one chunk's `tool_calls`. */
  private readonly queued: ModelStreamEvent[] = [];

  *push(chunk: ChatChunk): Generator<ModelStreamEvent> {
    if (!this.started) {
      this.started = true;
      yield { type: 'start', ...(chunk.model ? { model: chunk.model } : {}) };
    }
    if (chunk.usage) this.usage = usageOf(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta: ChatChunk['choices'][number]['delta'] | undefined = choice.delta;
    if (delta) {
      const reasoning = reasoningOf(delta);
      if (reasoning) yield { type: 'thinkingDelta', delta: reasoning };
      if (typeof delta.content === 'string' && delta.content !== '') yield { type: 'textDelta', delta: delta.content };
      if (typeof delta.refusal === 'string' && delta.refusal !== '') yield { type: 'textDelta', delta: delta.refusal };
      (delta.tool_calls ?? []).forEach((call, position) => {
        this.toolCallFragment(call.index ?? position, call);
      });
      yield* this.drainToolEvents();
    }
    if (choice.finish_reason) {
      this.finishReason = choice.finish_reason;
      yield* this.endToolCalls();
    }
  }

  *finish(): Generator<ModelStreamEvent> {
    if (!this.started) {
      yield { type: 'error', error: noStreamEvents() };
      return;
    }
    if (this.finishReason === null) {
      yield {
        type: 'error',
        error: streamEndedEarly(this.toolCalls.size > 0 ? 'cut during a tool call' : 'no finish_reason'),
      };
      return;
    }
    if (this.usage) yield { type: 'usage', usage: this.usage };
    const stopReason = this.finishReason === 'length' ? 'length' : this.toolCalls.size > 0 ? 'toolUse' : 'stop';
    yield { type: 'done', stopReason };
  }

  private toolCallFragment(
    index: number,
    call: { id?: string; function?: { name?: string; arguments?: string } },
  ): void {
    let state = this.toolCalls.get(index);
    if (!state) {
      state = { id: undefined, name: '', started: false, ended: false, pending: '' };
      this.toolCalls.set(index, state);
    }
    // A different id at a started index is a second call the server put at the same index: passed
    // on as a second start, which the runtime refuses (invalidResponse) instead of gluing the two.
    if (call.id && state.started && state.id !== undefined && call.id !== state.id) {
      this.queued.push({ type: 'toolCallStart', index, id: call.id, name: call.function?.name ?? state.name });
      return;
    }
    if (call.id && state.id === undefined) state.id = call.id;
    // Some servers repeat the name in every chunk; it is taken once, before the call starts.
    if (call.function?.name && !state.started) state.name = call.function.name;
    const fragment = call.function?.arguments ?? '';
    if (!state.started && state.name !== '') this.startToolCall(index, state);
    if (fragment === '') return;
    if (state.started) this.queued.push({ type: 'toolCallDelta', index, argumentsDelta: fragment });
    else state.pending += fragment;
  }

  private startToolCall(index: number, state: ToolCallState): void {
    state.started = true;
    this.queued.push({ type: 'toolCallStart', index, id: state.id ?? `call_${index}`, name: state.name });
    if (state.pending !== '') this.queued.push({ type: 'toolCallDelta', index, argumentsDelta: state.pending });
    state.pending = '';
  }

  private *drainToolEvents(): Generator<ModelStreamEvent> {
    yield* this.queued.splice(0);
  }

  private *endToolCalls(): Generator<ModelStreamEvent> {
    for (const [index, state] of [...this.toolCalls].sort(([a], [b]) => a - b)) {
      if (state.ended) continue;
      // A call whose name never came still starts, so its arguments are not lost.
      if (!state.started) this.startToolCall(index, state);
      state.ended = true;
      this.queued.push({ type: 'toolCallEnd', index });
    }
    yield* this.drainToolEvents();
  }
}

/** `reasoning_content` (DeepSeek, vLLM, llama.cpp) or `reasoning` (Ollama, OpenRouter): not in OpenAI's types. */
function reasoningOf(delta: object): string {
  const fields = delta as { reasoning_content?: unknown; reasoning?: unknown };
  if (typeof fields.reasoning_content === 'string') return fields.reasoning_content;
  if (typeof fields.reasoning === 'string') return fields.reasoning;
  return '';
}

/** OpenAI counts cached tokens inside `prompt_tokens`; our `input` is the uncached part, as costOf expects. */
function usageOf(usage: NonNullable<ChatChunk['usage']>): Usage {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    // Some compatible servers leave counts out; a missing count is 0, never NaN.
    input: Math.max(0, (usage.prompt_tokens ?? 0) - cached),
    output: usage.completion_tokens ?? 0,
    ...(cached > 0 ? { cacheRead: cached } : {}),
  };
}
