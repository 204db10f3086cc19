import type { ErrorBodyKind, ScriptedReply, Wire, WireEvent } from './wire.js';

/**
 * Anthropic Messages streaming, as https://docs.anthropic.com/en/docs/build-with-claude/streaming
 * documents it: `event:`/`data:` pairs — message_start (usage with cache counts), per content
 * block content_block_start / content_block_delta (text_delta, thinking_delta + signature_delta,
 * input_json_delta starting with an empty partial_json) / content_block_stop, a `ping` early on,
 * message_delta with stop_reason and cumulative output_tokens, message_stop.
 */
const RESPONSE_MODEL = 'claude-haiku-4-5-20251001';

function event(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

const STOP_REASONS = { stop: 'end_turn', toolUse: 'tool_use', length: 'max_tokens' } as const;

function messageStart(reply: Pick<ScriptedReply, 'usage'>): string {
  return event('message_start', {
    type: 'message_start',
    message: {
      id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
      type: 'message',
      role: 'assistant',
      model: RESPONSE_MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: reply.usage.input,
        cache_creation_input_tokens: reply.usage.cacheWrite ?? 0,
        cache_read_input_tokens: reply.usage.cacheRead ?? 0,
        output_tokens: 1,
        service_tier: 'standard',
      },
    },
  });
}

function blockEvents(index: number, start: unknown, deltas: unknown[], mark?: WireEvent['mark']): WireEvent[] {
  return [
    { sse: event('content_block_start', { type: 'content_block_start', index, content_block: start }) },
    ...deltas.map((delta) => ({
      sse: event('content_block_delta', { type: 'content_block_delta', index, delta }),
      ...(mark ? { mark } : {}),
    })),
    { sse: event('content_block_stop', { type: 'content_block_stop', index }) },
  ];
}

export const anthropicWire: Wire = {
  requestModel: 'claude-haiku-4-5',
  responseModel: RESPONSE_MODEL,
  listPrice: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  reportsCacheWrite: true,

  events(reply: ScriptedReply): WireEvent[] {
    const events: WireEvent[] = [{ sse: messageStart(reply) }];
    let index = 0;
    if (reply.thinking) {
      events.push(
        ...blockEvents(index++, { type: 'thinking', thinking: '', signature: '' }, [
          ...reply.thinking.map((thinking) => ({ type: 'thinking_delta', thinking })),
          { type: 'signature_delta', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' },
        ]),
      );
    }
    if (reply.text) {
      const deltas = reply.text.map((text) => ({ type: 'text_delta', text }));
      events.push(...blockEvents(index++, { type: 'text', text: '' }, deltas));
    }
    for (const call of reply.toolCalls ?? []) {
      const start = { type: 'tool_use', id: call.id, name: call.name, input: {} };
      const [opening, ...rest] = blockEvents(
        index++,
        start,
        call.fragments.map((partial_json) => ({ type: 'input_json_delta', partial_json })),
        'toolFragment',
      );
      // The API opens every tool_use block with an empty partial_json.
      const empty = event('content_block_delta', {
        type: 'content_block_delta',
        index: index - 1,
        delta: { type: 'input_json_delta', partial_json: '' },
      });
      events.push(opening as WireEvent, { sse: empty }, ...rest);
    }
    // As in the documented example, a ping follows the first content_block_start.
    events.splice(Math.min(2, events.length), 0, { sse: event('ping', { type: 'ping' }) });
    events.push({
      sse: event('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: STOP_REASONS[reply.finish], stop_sequence: null },
        usage: { output_tokens: reply.usage.output },
      }),
      mark: 'finish',
    });
    events.push({ sse: event('message_stop', { type: 'message_stop' }), mark: 'finish' });
    return events;
  },

  toolIndex: (reply, i) => (reply.thinking ? 1 : 0) + (reply.text ? 1 : 0) + i,

  midStreamOverloaded(text: string): string[] {
    return [
      messageStart({ usage: { input: 10, output: 1 } }),
      event('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      }),
      event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
      event('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    ];
  },

  errorBody(kind: ErrorBodyKind): string {
    const error = (type: string, message: string) =>
      JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' });
    switch (kind) {
      case 'rateLimit':
        return error(
          'rate_limit_error',
          'This request would exceed the rate limit for your organization (1b8f2c3d) of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.',
        );
      case 'overloaded':
        return error('overloaded_error', 'Overloaded');
      case 'serverError':
        return error('api_error', 'Internal server error');
      case 'unauthorized':
        return error('authentication_error', 'invalid x-api-key');
      case 'forbidden':
        return error('permission_error', 'Your API key does not have permission to use the specified resource.');
      case 'contextOverflow':
        return error('invalid_request_error', 'prompt is too long: 208310 tokens > 200000 maximum');
      case 'badRequest':
        return error('invalid_request_error', 'messages.0.content.0.text: text content blocks must be non-empty');
      case 'gatewayTimeout':
        return error('timeout_error', 'Request timed out');
    }
  },
};
