import type {
  APICallError,
  LanguageModelV3,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { AgentError, modelError, type ModelError } from '../domain/errors.js';
import { knownSecrets, redactModelError } from '../domain/redact.js';
import type { Usage } from '../domain/messages.js';
import {
  abortReasonText,
  classifyProviderFailure,
  classifyTransportFailure,
  noStreamEvents,
  streamEndedEarly,
} from './classify-http.js';
import type { Model, ModelPricing, ModelRequest, ModelStreamEvent } from './port.js';
import { IDLE, idleMessage, withinIdle } from './idle.js';
import { resolvePricing, type PriceTable } from './pricing.js';
import { assistantParts, providerMessages } from './provider-messages.js';

/** Call settings passed to every `doStream` (maxOutputTokens, temperature, providerOptions, headers, …). */
export type AISDKCallSettings = Partial<
  Omit<LanguageModelV4CallOptions, 'prompt' | 'tools' | 'toolChoice' | 'abortSignal'>
>;

/** A language model of AI SDK 6 (`LanguageModelV3`) or AI SDK 7 (`LanguageModelV4`) providers. */
export type AISDKLanguageModel = LanguageModelV3 | LanguageModelV4;

export interface FromAISDKOptions {
  /** `Model.name`; defaults to the language model's `modelId`. */
  name?: string;
  pricing?: ModelPricing;
  priceTable?: PriceTable;
  callSettings?: AISDKCallSettings;
  /**
   * Limits every silence of the provider, in ms: until `doStream` answers, then between stream
   * parts (a body that stalls after its headers ends with a `timeout` error). Default: none (the
   * agent's `timeouts.modelIdleMs` still applies).
   */
  timeoutMs?: number;
  /**
   * Values redacted from every error text this model reports: the AI SDK provider holds your API
   * key, not this adapter, so pass it here. `sk-…` keys, `Authorization`/`x-api-key` header values
   * and the auth headers of `callSettings.headers` are redacted without it.
   */
  secrets?: readonly string[];
}

/**
 * Wraps a Vercel AI SDK language model (the `LanguageModelV3` specification of AI SDK 6 providers or
 * `LanguageModelV4` of AI SDK 7: `@ai-sdk/openai`, `@ai-sdk/anthropic`, `@ai-sdk/openai-compatible`,
 * …) as a Model. It calls `doStream` directly, below `streamText`, so no AI SDK retry layer runs:
 * retries belong to the master loop only.
 */
export function fromAISDK(model: AISDKLanguageModel, options: FromAISDKOptions = {}): Model {
  const version: unknown = (model as { specificationVersion?: unknown } | null)?.specificationVersion;
  if (version !== 'v3' && version !== 'v4') {
    throw new AgentError(
      'InvalidOptions',
      `fromAISDK needs a LanguageModelV3 or LanguageModelV4 (AI SDK 6 or 7 providers); got specificationVersion ${JSON.stringify(version)}`,
    );
  }
  // V4 is a superset of V3 for everything this adapter sends and reads (V4 adds parts we skip and a
  // text input encoding we handle), so one code path serves both.
  const languageModel = model as LanguageModelV4;
  const pricing = resolvePricing(languageModel.modelId, options);
  const secrets = knownSecrets(options.secrets ?? [], options.callSettings?.headers);
  return {
    name: options.name ?? languageModel.modelId,
    // 'openai.chat' → 'openai': the AI SDK suffixes the provider with its API.
    provider: languageModel.provider.split('.')[0] ?? languageModel.provider,
    ...(pricing ? { pricing } : {}),
    stream: (request, { signal }) => streamLanguageModel(languageModel, options, secrets, request, signal),
  };
}

async function* streamLanguageModel(
  languageModel: LanguageModelV4,
  options: FromAISDKOptions,
  secrets: readonly string[],
  request: ModelRequest,
  signal: AbortSignal,
): AsyncGenerator<ModelStreamEvent> {
  // The one place a provider's own words (a 401 body may echo the key) become an error event.
  const failed = (error: unknown): ModelStreamEvent => ({
    type: 'error',
    error: redactModelError(classifyAISDKError(error, signal), secrets),
  });
  const aborted = (): ModelStreamEvent => ({ type: 'error', error: modelError('aborted', abortReasonText(signal)) });
  if (signal.aborted) {
    yield aborted();
    return;
  }
  let reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart> | undefined;
  // A provider that ignores abortSignal must not hold the caller: abort cancels our read too.
  const cancelRead = () => void reader?.cancel().catch(() => undefined);
  // Aborted by the caller or by the idle limit: the provider's request is cancelled either way.
  const request_ = new AbortController();
  const onAbort = () => {
    request_.abort(signal.reason);
    cancelRead();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  const idleMs = options.timeoutMs;
  const onIdle = () => {
    request_.abort(new Error('idle'));
    cancelRead();
  };
  const timedOut = (): ModelStreamEvent => ({ type: 'error', error: modelError('timeout', idleMessage(idleMs ?? 0)) });
  const mapper = new PartMapper(languageModel.modelId);
  try {
    const pending = Promise.resolve(languageModel.doStream(callOptions(options, request, request_.signal)));
    const result = await withinIdle(untilAborted(pending, signal), idleMs, onIdle);
    if (result === undefined || result === IDLE) {
      // A stream that arrives after the abort is cancelled unread.
      pending.then(
        (late) => late.stream.cancel().catch(() => undefined),
        () => undefined,
      );
      yield result === IDLE ? timedOut() : aborted();
      return;
    }
    reader = result.stream.getReader();
    if (signal.aborted) cancelRead();
    for (;;) {
      const read = await withinIdle(reader.read(), idleMs, onIdle);
      if (read === IDLE) {
        yield timedOut();
        return;
      }
      const { done, value } = read;
      if (done) break;
      if (value.type === 'error') {
        // The body is released before the error is reported, whatever the consumer does next.
        cancelRead();
        yield failed(value.error);
        return;
      }
      yield* mapper.push(value);
    }
  } catch (error) {
    yield failed(error);
    return;
  } finally {
    signal.removeEventListener('abort', onAbort);
    // An early return (error part, consumer stopped) must still cancel the HTTP body.
    reader?.cancel().catch(() => undefined);
  }
  if (signal.aborted) {
    yield aborted();
    return;
  }
  yield* mapper.finish();
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function callOptions(
  options: FromAISDKOptions,
  request: ModelRequest,
  signal: AbortSignal,
): LanguageModelV4CallOptions {
  const tools = request.tools.map((tool) => ({
    type: 'function' as const,
    name: tool.name,
    description: tool.description,
    inputSchema: tool.parameters,
  }));
  return {
    ...options.callSettings,
    prompt: languageModelPrompt(request),
    ...(tools.length > 0 ? { tools, toolChoice: { type: 'auto' as const } } : {}),
    abortSignal: signal,
  };
}

/** Our history in the language model prompt format; consecutive tool results share one `tool` message. */
function languageModelPrompt(request: ModelRequest): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Message[] = [];
  if (request.systemPrompt) prompt.push({ role: 'system', content: request.systemPrompt });
  for (const message of providerMessages(request.messages)) {
    if (message.role === 'user') {
      prompt.push({ role: 'user', content: [{ type: 'text', text: message.content }] });
    } else if (message.role === 'toolResult') {
      const part = {
        type: 'tool-result' as const,
        toolCallId: message.toolCallId,
        toolName: message.toolName,
        output: message.isError
          ? { type: 'error-text' as const, value: message.content }
          : { type: 'text' as const, value: message.content },
      };
      const last = prompt[prompt.length - 1];
      if (last && last.role === 'tool') last.content.push(part);
      else prompt.push({ role: 'tool', content: [part] });
    } else {
      const { text, toolCalls } = assistantParts(message);
      if (text === '' && toolCalls.length === 0) continue;
      prompt.push({
        role: 'assistant',
        content: [
          ...(text !== '' ? [{ type: 'text' as const, text }] : []),
          ...toolCalls.map((call) => ({
            type: 'tool-call' as const,
            toolCallId: call.id,
            toolName: call.name,
            input: call.arguments,
          })),
        ],
      });
    }
  }
  return prompt;
}

/**
 * `APICallError.isInstance` without loading `@ai-sdk/provider`: the AI SDK marks its errors with a
 * global symbol so they are recognised across package copies and majors; we read the same mark.
 */
function isAPICallError(error: unknown): error is APICallError {
  const mark = Symbol.for('vercel.ai.error.AI_APICallError');
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[mark] === true;
}

function classifyAISDKError(error: unknown, signal: AbortSignal): ModelError {
  if (signal.aborted) return modelError('aborted', abortReasonText(signal));
  if (isAPICallError(error)) {
    // No status: the request never got a response (refused, reset). A success status: reading the
    // body failed ("Failed to process successful response"). Either way the cause says why.
    if (error.statusCode === undefined || error.statusCode < 400) return classifyTransportFailure(error, signal);
    return classifyProviderFailure({
      status: error.statusCode,
      headers: error.responseHeaders,
      message: error.message,
      codes: errorCodes(error.data),
      ...(error.responseBody !== undefined ? { body: error.responseBody } : {}),
    });
  }
  // Providers forward a mid-stream error event's JSON as is (`{ type: 'overloaded_error', message }`).
  if (isErrorBody(error)) {
    return classifyProviderFailure({ message: error.message, codes: [error.type, error.code] });
  }
  if (error instanceof Error && /ended without a finish reason/i.test(error.message)) {
    return streamEndedEarly('no finish reason');
  }
  return classifyTransportFailure(error, signal);
}

function isErrorBody(value: unknown): value is { message: string; type?: string; code?: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    !(value instanceof Error) &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

/** Error type/code from a parsed error body: OpenAI `{ error: { type, code } }`, Anthropic `{ error: { type } }`. */
function errorCodes(data: unknown): string[] {
  const inner = typeof data === 'object' && data !== null ? (data as { error?: unknown }).error : undefined;
  if (typeof inner !== 'object' || inner === null) return [];
  const { type, code } = inner as { type?: unknown; code?: unknown };
  return [type, code].filter((value): value is string => typeof value === 'string');
}

interface ToolCallState {
  index: number;
  sawFragment: boolean;
  ended: boolean;
  /** V4 `inputEncoding: 'text'`: the deltas are not JSON; the final `tool-call` part carries the JSON input. */
  textEncoded: boolean;
}

/**
 * Language model stream parts → ModelStreamEvents. The AI SDK names tool calls by id, not index,
 * so each call gets the next index in order of appearance. Provider-executed tools are skipped:
 * their results come from the provider, not from our loop.
 */
class PartMapper {
  private started = false;
  private finish_: Extract<LanguageModelV4StreamPart, { type: 'finish' }> | undefined;
  private readonly toolCalls = new Map<string, ToolCallState>();
  private nextIndex = 0;

  constructor(private readonly modelId: string) {}

  *push(part: LanguageModelV4StreamPart): Generator<ModelStreamEvent> {
    if (part.type === 'stream-start' || part.type === 'raw') return;
    if (!this.started) {
      this.started = true;
      const model = part.type === 'response-metadata' && part.modelId ? part.modelId : this.modelId;
      yield { type: 'start', model };
    }
    switch (part.type) {
      case 'text-delta':
        if (part.delta !== '') yield { type: 'textDelta', delta: part.delta };
        return;
      case 'reasoning-delta':
        if (part.delta !== '') yield { type: 'thinkingDelta', delta: part.delta };
        return;
      case 'tool-input-start': {
        if (part.providerExecuted) return;
        const open = this.toolCalls.get(part.id);
        // The same id started again while its input is open: passed on as a second start for its
        // index, which the runtime refuses (invalidResponse) instead of gluing two calls together.
        if (open && !open.ended) {
          yield { type: 'toolCallStart', index: open.index, id: part.id, name: part.toolName };
          return;
        }
        yield this.startToolCall(part.id, part.toolName, part.inputEncoding === 'text');
        return;
      }
      case 'tool-input-delta': {
        const state = this.toolCalls.get(part.id);
        if (!state || state.ended || state.textEncoded || part.delta === '') return;
        state.sawFragment = true;
        yield { type: 'toolCallDelta', index: state.index, argumentsDelta: part.delta };
        return;
      }
      case 'tool-input-end': {
        const state = this.toolCalls.get(part.id);
        if (!state || state.ended || state.textEncoded) return;
        state.ended = true;
        yield { type: 'toolCallEnd', index: state.index };
        return;
      }
      case 'tool-call': {
        if (part.providerExecuted) return;
        // Some providers send only the complete call; others send it after its input stream.
        let state = this.toolCalls.get(part.toolCallId);
        if (!state) {
          yield this.startToolCall(part.toolCallId, part.toolName);
          state = this.toolCalls.get(part.toolCallId) as ToolCallState;
        }
        if (state.ended) return;
        if (!state.sawFragment && part.input !== '') {
          yield { type: 'toolCallDelta', index: state.index, argumentsDelta: part.input };
        }
        state.ended = true;
        yield { type: 'toolCallEnd', index: state.index };
        return;
      }
      case 'finish':
        this.finish_ = part;
        return;
      default:
        return;
    }
  }

  *finish(): Generator<ModelStreamEvent> {
    const finish = this.finish_;
    if (!this.started) {
      yield { type: 'error', error: noStreamEvents() };
      return;
    }
    if (!finish) {
      yield {
        type: 'error',
        error: streamEndedEarly(this.toolCalls.size > 0 ? 'cut during a tool call' : 'no finish part'),
      };
      return;
    }
    // V4: the provider saw its stream end before the model said how it finished.
    if (finish.finishReason.unified === 'interrupted') {
      yield { type: 'error', error: streamEndedEarly('interrupted before a finish reason') };
      return;
    }
    if (finish.finishReason.unified === 'error') {
      yield {
        type: 'error',
        error: modelError('unknown', `provider finished with an error (${finish.finishReason.raw ?? 'no detail'})`),
      };
      return;
    }
    const usage = usageOf(finish.usage);
    if (usage) yield { type: 'usage', usage };
    const reason = finish.finishReason.unified;
    yield {
      type: 'done',
      stopReason:
        reason === 'length' ? 'length' : reason === 'tool-calls' || this.toolCalls.size > 0 ? 'toolUse' : 'stop',
    };
  }

  private startToolCall(id: string, name: string, textEncoded = false): ModelStreamEvent {
    // A counter, not the map's size: a repeated id replaces its entry and must not reuse an index.
    const state: ToolCallState = { index: this.nextIndex++, sawFragment: false, ended: false, textEncoded };
    this.toolCalls.set(id, state);
    return { type: 'toolCallStart', index: state.index, id, name };
  }
}

/** `input` is the uncached part, as costOf expects: `noCache`, else the total minus both cache counts. */
function usageOf(usage: LanguageModelV4Usage): Usage | undefined {
  const { total, noCache, cacheRead, cacheWrite } = usage.inputTokens;
  if (total === undefined && noCache === undefined && usage.outputTokens.total === undefined) return undefined;
  const read = cacheRead ?? 0;
  const write = cacheWrite ?? 0;
  return {
    input: noCache ?? Math.max(0, (total ?? 0) - read - write),
    output: usage.outputTokens.total ?? 0,
    ...(read > 0 ? { cacheRead: read } : {}),
    ...(write > 0 ? { cacheWrite: write } : {}),
  };
}
