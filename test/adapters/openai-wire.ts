import type { ErrorBodyKind, ScriptedReply, Wire, WireEvent } from './wire.js';

/**
 * OpenAI Chat Completions streaming (`stream: true`, `stream_options: { include_usage: true }`), as
 * https://platform.openai.com/docs/api-reference/chat-streaming documents it: `data:` lines of
 * `chat.completion.chunk` objects, `usage: null` on every chunk but the last, a final chunk with
 * empty `choices` and the usage, then `data: [DONE]`. Reasoning text arrives as
 * `delta.reasoning_content`, as vLLM, llama.cpp server and DeepSeek send it.
 */
const RESPONSE_MODEL = 'gpt-4o-mini-2024-07-18';

function chunk(choices: unknown[], usage: unknown = null): string {
  return `data: ${JSON.stringify({
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    object: 'chat.completion.chunk',
    created: 1741570283,
    model: RESPONSE_MODEL,
    service_tier: 'default',
    system_fingerprint: 'fp_06737a9306',
    choices,
    usage,
  })}\n\n`;
}

function choice(delta: Record<string, unknown>, finishReason: string | null = null): unknown {
  return { index: 0, delta, logprobs: null, finish_reason: finishReason };
}

const FINISH_REASONS = { stop: 'stop', toolUse: 'tool_calls', length: 'length' } as const;

export const openAIWire: Wire = {
  requestModel: 'gpt-4o-mini',
  responseModel: RESPONSE_MODEL,
  listPrice: { input: 0.15, output: 0.6, cacheRead: 0.075 },
  reportsCacheWrite: false,

  events(reply: ScriptedReply): WireEvent[] {
    const events: WireEvent[] = [{ sse: chunk([choice({ role: 'assistant', content: '', refusal: null })]) }];
    for (const text of reply.thinking ?? []) events.push({ sse: chunk([choice({ reasoning_content: text })]) });
    for (const text of reply.text ?? []) events.push({ sse: chunk([choice({ content: text })]) });
    (reply.toolCalls ?? []).forEach((call, index) => {
      events.push({
        sse: chunk([
          choice({
            tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
          }),
        ]),
      });
      for (const fragment of call.fragments) {
        events.push({
          sse: chunk([choice({ tool_calls: [{ index, function: { arguments: fragment } }] })]),
          mark: 'toolFragment',
        });
      }
    });
    const cached = reply.usage.cacheRead ?? 0;
    events.push({ sse: chunk([choice({}, FINISH_REASONS[reply.finish])]), mark: 'finish' });
    events.push({
      sse: chunk([], {
        prompt_tokens: reply.usage.input + cached,
        completion_tokens: reply.usage.output,
        total_tokens: reply.usage.input + cached + reply.usage.output,
        prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      }),
      mark: 'finish',
    });
    events.push({ sse: 'data: [DONE]\n\n', mark: 'finish' });
    return events;
  },

  toolIndex: (_reply, i) => i,

  midStreamOverloaded(text: string): string[] {
    return [
      chunk([choice({ role: 'assistant', content: '', refusal: null })]),
      chunk([choice({ content: text })]),
      `data: ${JSON.stringify({
        error: {
          message: 'The server had an error while processing your request. Sorry about that!',
          type: 'server_error',
          param: null,
          code: null,
        },
      })}\n\n`,
    ];
  },

  errorBody(kind: ErrorBodyKind): string {
    const error = (message: string, type: string, code: string | null, param: string | null = null) =>
      JSON.stringify({ error: { message, type, param, code } });
    switch (kind) {
      case 'rateLimit':
        return error(
          'Rate limit reached for gpt-4o-mini in organization org-abc123 on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.',
          'requests',
          'rate_limit_exceeded',
        );
      case 'overloaded':
        return error('The engine is currently overloaded, please try again later', 'server_error', null);
      case 'serverError':
        return error('The server had an error while processing your request. Sorry about that!', 'server_error', null);
      case 'unauthorized':
        return error(
          'Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.',
          'invalid_request_error',
          'invalid_api_key',
        );
      case 'forbidden':
        return error(
          'Project `proj_abc` does not have access to model `gpt-4o-mini`',
          'invalid_request_error',
          'model_not_found',
        );
      case 'contextOverflow':
        return error(
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.",
          'invalid_request_error',
          'context_length_exceeded',
          'messages',
        );
      case 'badRequest':
        return error(
          "Invalid type for 'messages[0].content': expected one of a string or array of objects, but got an object instead.",
          'invalid_request_error',
          'invalid_type',
          'messages[0].content',
        );
      case 'gatewayTimeout':
        return error('Request timed out.', 'timeout', null);
    }
  },
};
