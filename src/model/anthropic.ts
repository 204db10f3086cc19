import type Anthropic from '@anthropic-ai/sdk';
import { modelError, type ModelError } from '../domain/errors.js';
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

type StreamEvent = Anthropic.Messages.RawMessageStreamEvent;
type MessageParam = Anthropic.Messages.MessageParam;
type ContentBlockParam = Anthropic.Messages.ContentBlockParam;
type StreamParams = Anthropic.Messages.MessageCreateParamsStreaming;

/** Request parameters passed through untouched (stop_sequences, metadata, thinking, tool_choice, …). */
export type AnthropicRequestExtras = Partial<
  Omit<StreamParams, 'model' | 'messages' | 'system' | 'tools' | 'stream' | 'max_tokens'>
>;

export interface AnthropicOptions extends SdkModelOptions {
  /** `claude-haiku-4-5`, `claude-opus-4-5`, … */
  model: string;
  /** Falls back to `ANTHROPIC_API_KEY`. */
  apiKey?: string;
  /** `https://api.anthropic.com` by default (the client appends `/v1/messages`). */
  baseURL?: string;
  /** Required by the Messages API; 8192 unless given. */
  maxTokens?: number;
  body?: AnthropicRequestExtras;
}

const DEFAULT_MAX_TOKENS = 8192;

const ANTHROPIC_SDK: OptionalPackage = { name: '@anthropic-ai/sdk', range: '^1', neededBy: 'agentchart/anthropic' };
const loadAnthropic = lazyPackage(ANTHROPIC_SDK, async () => (await import('@anthropic-ai/sdk')).default);

/**
 * A Model on the official `@anthropic-ai/sdk`, speaking the Messages API with SSE streaming. The
 * client's own retries are off: retries belong to the master loop only. Throws
 * `AgentError('MissingDependency')` when `@anthropic-ai/sdk` is not installed.
 */
export function anthropic(options: AnthropicOptions): Model {
  assertInstalled(ANTHROPIC_SDK);
  const sdk = lazyClient('anthropic', loadAnthropic, (Client) => new Client(sdkClientOptions(options)));
  return sdkModel(options, {
    provider: 'anthropic',
    open: async (request, signal) =>
      (await sdk.client()).messages.create(messagesRequest(options, request), { signal, maxRetries: 0 }),
    mapper: () => new EventMapper(),
    classify: (error, signal) => classifyAnthropicError(sdk.sdk(), error, signal),
    // The client reads ANTHROPIC_API_KEY (x-api-key) and ANTHROPIC_AUTH_TOKEN (Bearer) when not given a key.
    secrets: knownSecrets(
      [options.apiKey ?? readEnv('ANTHROPIC_API_KEY'), readEnv('ANTHROPIC_AUTH_TOKEN')],
      options.headers,
    ),
  });
}

function messagesRequest(
  options: Pick<AnthropicOptions, 'model' | 'maxTokens' | 'body'>,
  request: ModelRequest,
): StreamParams {
  const tools = request.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { ...tool.parameters, type: 'object' as const },
  }));
  return {
    ...options.body,
    model: options.model,
    max_tokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
    ...(request.systemPrompt ? { system: request.systemPrompt } : {}),
    messages: anthropicMessages(request),
    ...(tools.length > 0 ? { tools } : {}),
    stream: true,
  };
}

/**
 * Our history as Messages API turns. Consecutive entries of one role become one message (the API
 * wants tool results of one assistant turn together), tool_result blocks first, as the API requires.
 * Empty text is left out: the API rejects empty text blocks.
 */
function anthropicMessages(request: ModelRequest): MessageParam[] {
  const turns: Array<{ role: 'user' | 'assistant'; content: ContentBlockParam[] }> = [];
  const append = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: [...blocks] });
  };
  for (const message of providerMessages(request.messages)) {
    if (message.role === 'user') {
      append('user', message.content === '' ? [] : [{ type: 'text', text: message.content }]);
    } else if (message.role === 'toolResult') {
      append('user', [
        {
          type: 'tool_result',
          tool_use_id: message.toolCallId,
          ...(message.content !== '' ? { content: message.content } : {}),
          ...(message.isError ? { is_error: true } : {}),
        },
      ]);
    } else {
      const { text, toolCalls } = assistantParts(message);
      append('assistant', [
        ...(text !== '' ? [{ type: 'text' as const, text }] : []),
        ...toolCalls.map((call) => ({
          type: 'tool_use' as const,
          id: call.id,
          name: call.name,
          input: call.arguments,
        })),
      ]);
    }
  }
  return turns.map((turn) =>
    turn.role === 'user'
      ? {
          role: 'user',
          content: [
            ...turn.content.filter((block) => block.type === 'tool_result'),
            ...turn.content.filter((block) => block.type !== 'tool_result'),
          ],
        }
      : turn,
  );
}

function classifyAnthropicError(
  Anthropic: typeof import('@anthropic-ai/sdk').default | undefined,
  error: unknown,
  signal: AbortSignal,
): ModelError {
  if (signal.aborted) return modelError('aborted', abortReasonText(signal));
  if (Anthropic === undefined) return classifyTransportFailure(error, signal); // the SDK did not load
  if (error instanceof Anthropic.APIConnectionTimeoutError) return modelError('timeout', error.message);
  if (
    error instanceof Anthropic.APIError &&
    !(error instanceof Anthropic.APIConnectionError) &&
    !(error instanceof Anthropic.APIUserAbortError)
  ) {
    return classifyProviderFailure({
      status: error.status,
      headers: error.headers,
      message: error.message,
      codes: [error.type, error.errorCode],
    });
  }
  return classifyTransportFailure(error, signal);
}

interface ToolBlockState {
  /** `input` of content_block_start: `{}` on the real API, a full object on some compatible servers. */
  startInput: unknown;
  sawFragment: boolean;
}

/**
 * Messages API events → ModelStreamEvents. The provider index is the content block index; a tool
 * call ends at its `content_block_stop`. Usage fields are cumulative: the latest value wins.
 */
class EventMapper {
  private stopReason: string | null = null;
  private readonly usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  private sawUsage = false;
  private readonly toolBlocks = new Map<number, ToolBlockState>();
  private openToolBlocks = 0;
  private sawToolUse = false;
  private sawEvent = false;

  *push(event: StreamEvent): Generator<ModelStreamEvent> {
    this.sawEvent = true;
    switch (event.type) {
      case 'message_start':
        yield { type: 'start', model: event.message.model };
        this.mergeUsage(event.message.usage);
        return;
      case 'content_block_start': {
        const block = event.content_block;
        if (block.type === 'text' && block.text !== '') yield { type: 'textDelta', delta: block.text };
        if (block.type === 'thinking' && block.thinking !== '') yield { type: 'thinkingDelta', delta: block.thinking };
        if (block.type === 'tool_use') {
          this.toolBlocks.set(event.index, { startInput: block.input, sawFragment: false });
          this.openToolBlocks++;
          this.sawToolUse = true;
          yield { type: 'toolCallStart', index: event.index, id: block.id, name: block.name };
        }
        return;
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (delta.type === 'text_delta' && delta.text !== '') yield { type: 'textDelta', delta: delta.text };
        if (delta.type === 'thinking_delta' && delta.thinking !== '')
          yield { type: 'thinkingDelta', delta: delta.thinking };
        const tool = this.toolBlocks.get(event.index);
        if (delta.type === 'input_json_delta' && tool && delta.partial_json !== '') {
          tool.sawFragment = true;
          yield { type: 'toolCallDelta', index: event.index, argumentsDelta: delta.partial_json };
        }
        return;
      }
      case 'content_block_stop': {
        const tool = this.toolBlocks.get(event.index);
        if (!tool) return;
        if (!tool.sawFragment && isNonEmptyObject(tool.startInput)) {
          yield { type: 'toolCallDelta', index: event.index, argumentsDelta: JSON.stringify(tool.startInput) };
        }
        this.toolBlocks.delete(event.index);
        this.openToolBlocks--;
        yield { type: 'toolCallEnd', index: event.index };
        return;
      }
      case 'message_delta':
        if (event.delta.stop_reason) this.stopReason = event.delta.stop_reason;
        this.mergeUsage(event.usage);
        return;
      default:
        return;
    }
  }

  *finish(): Generator<ModelStreamEvent> {
    if (!this.sawEvent) {
      yield { type: 'error', error: noStreamEvents() };
      return;
    }
    if (this.stopReason === null) {
      yield {
        type: 'error',
        error: streamEndedEarly(this.openToolBlocks > 0 ? 'cut during a tool call' : 'no stop_reason'),
      };
      return;
    }
    if (this.sawUsage) {
      const { input, output, cacheRead, cacheWrite } = this.usage;
      const usage: Usage = {
        input,
        output,
        ...(cacheRead > 0 ? { cacheRead } : {}),
        ...(cacheWrite > 0 ? { cacheWrite } : {}),
      };
      yield { type: 'usage', usage };
    }
    yield { type: 'done', stopReason: stopReasonOf(this.stopReason, this.sawToolUse) };
  }

  private mergeUsage(usage: {
    input_tokens?: number | null;
    output_tokens?: number | null;
    cache_read_input_tokens?: number | null;
    cache_creation_input_tokens?: number | null;
  }): void {
    if (typeof usage.input_tokens === 'number') this.usage.input = usage.input_tokens;
    if (typeof usage.output_tokens === 'number') this.usage.output = usage.output_tokens;
    if (typeof usage.cache_read_input_tokens === 'number') this.usage.cacheRead = usage.cache_read_input_tokens;
    if (typeof usage.cache_creation_input_tokens === 'number')
      this.usage.cacheWrite = usage.cache_creation_input_tokens;
    this.sawUsage = true;
  }
}

function stopReasonOf(stopReason: string, sawToolUse: boolean): 'stop' | 'toolUse' | 'length' {
  // model_context_window_exceeded: the output was cut because the context filled up.
  if (stopReason === 'max_tokens' || stopReason === 'model_context_window_exceeded') return 'length';
  if (stopReason === 'tool_use' || sawToolUse) return 'toolUse';
  return 'stop';
}

function isNonEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length > 0;
}
