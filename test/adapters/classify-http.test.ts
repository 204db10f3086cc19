import {
  classifyProviderFailure,
  classifyTransportFailure,
  isContextOverflowText,
  retryAfterMsFrom,
} from 'agentchart/model-kit';
import { describe, expect, it } from 'vitest';

const NOW = Date.parse('2025-06-01T12:00:00.000Z');

describe('retryAfterMsFrom', () => {
  it('reads retry-after-ms first, then retry-after as seconds or an HTTP-date', () => {
    expect(retryAfterMsFrom(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }), NOW)).toBe(1500);
    expect(retryAfterMsFrom(new Headers({ 'retry-after': '2' }), NOW)).toBe(2000);
    expect(retryAfterMsFrom(new Headers({ 'retry-after': '0.5' }), NOW)).toBe(500);
    expect(retryAfterMsFrom(new Headers({ 'retry-after': 'Sun, 01 Jun 2025 12:00:07 GMT' }), NOW)).toBe(7000);
  });

  it('reads plain header records case-insensitively (as the AI SDK passes them)', () => {
    expect(retryAfterMsFrom({ 'Retry-After': '3' }, NOW)).toBe(3000);
  });

  it('clamps a date in the past to 0 and ignores what it cannot parse', () => {
    expect(retryAfterMsFrom(new Headers({ 'retry-after': 'Sun, 01 Jun 2025 11:59:00 GMT' }), NOW)).toBe(0);
    expect(retryAfterMsFrom(new Headers({ 'retry-after': 'soon' }), NOW)).toBeUndefined();
    expect(retryAfterMsFrom(new Headers({ 'retry-after-ms': 'soon', 'retry-after': '1' }), NOW)).toBe(1000);
    expect(retryAfterMsFrom(new Headers(), NOW)).toBeUndefined();
    expect(retryAfterMsFrom(undefined, NOW)).toBeUndefined();
  });
});

describe('classifyProviderFailure', () => {
  const kindOf = (status: number | undefined, message = 'x', codes: string[] = []) =>
    classifyProviderFailure({ ...(status !== undefined ? { status } : {}), message, codes }, NOW).kind;

  it('maps statuses as documented in classify-http.ts', () => {
    expect(
      [429, 529, 503, 500, 501, 502, 504, 408, 401, 403, 413, 404, 422, 400].map((status) => [status, kindOf(status)]),
    ).toEqual([
      [429, 'rateLimit'],
      [529, 'overloaded'],
      [503, 'overloaded'],
      [500, 'overloaded'],
      [501, 'overloaded'],
      [502, 'network'],
      [504, 'timeout'],
      [408, 'timeout'],
      [401, 'auth'],
      [403, 'auth'],
      [413, 'contextOverflow'],
      [404, 'badRequest'],
      [422, 'badRequest'],
      [400, 'badRequest'],
    ]);
  });

  it('treats an exhausted quota (429 insufficient_quota) as auth: no retry fixes it', () => {
    expect(kindOf(429, 'You exceeded your current quota', ['insufficient_quota'])).toBe('auth');
  });

  it('recognises context-length errors by code or by wording', () => {
    expect(kindOf(400, 'whatever', ['context_length_exceeded'])).toBe('contextOverflow');
    expect(kindOf(400, 'prompt is too long: 208310 tokens > 200000 maximum')).toBe('contextOverflow');
    expect(kindOf(400, "This model's maximum context length is 8192 tokens")).toBe('contextOverflow');
    expect(
      classifyProviderFailure({
        status: 400,
        message: 'Bad Request',
        body: '{"error":"the request exceeds the available context size"}',
      }).kind,
    ).toBe('contextOverflow');
  });

  it('classifies mid-stream error events (no status) by their type or code', () => {
    expect(kindOf(undefined, 'Overloaded', ['overloaded_error'])).toBe('overloaded');
    expect(kindOf(undefined, 'slow down', ['rate_limit_error'])).toBe('rateLimit');
    expect(kindOf(undefined, 'oops', ['server_error'])).toBe('overloaded');
    expect(kindOf(undefined, 'prompt is too long', ['invalid_request_error'])).toBe('contextOverflow');
    expect(kindOf(undefined, 'strange', ['something_new'])).toBe('unknown');
  });

  it('carries status, message and retry-after', () => {
    expect(
      classifyProviderFailure(
        { status: 429, message: '429 Rate limit', headers: new Headers({ 'retry-after': '2' }) },
        NOW,
      ),
    ).toEqual({ kind: 'rateLimit', message: '429 Rate limit', retryable: true, status: 429, retryAfterMs: 2000 });
  });
});

describe('classifyTransportFailure', () => {
  const reset = Object.assign(new TypeError('terminated'), {
    cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
  });

  it('classifies resets, refusals and cut streams as network, with the cause in the message', () => {
    expect(classifyTransportFailure(reset)).toEqual({
      kind: 'network',
      message: 'terminated: read ECONNRESET',
      retryable: true,
    });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(classifyTransportFailure(new TypeError('fetch failed', { cause: refused })).kind).toBe('network');
  });

  it('classifies timeouts as timeout', () => {
    expect(classifyTransportFailure(new DOMException('The operation timed out.', 'TimeoutError')).kind).toBe('timeout');
    expect(
      classifyTransportFailure(Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' }))
        .kind,
    ).toBe('timeout');
  });

  it('lets an aborted signal win, with its reason as the message', () => {
    const controller = new AbortController();
    controller.abort('user pressed stop');
    expect(classifyTransportFailure(reset, controller.signal)).toEqual({
      kind: 'aborted',
      message: 'user pressed stop',
      retryable: false,
    });
    expect(classifyTransportFailure(new DOMException('This operation was aborted', 'AbortError')).kind).toBe('aborted');
  });

  it('calls a body that is not the protocol (JSON that does not parse) an invalidResponse, retryable', () => {
    expect(classifyTransportFailure(new SyntaxError('Unexpected token < in JSON'))).toEqual({
      kind: 'invalidResponse',
      message: 'Unexpected token < in JSON',
      retryable: true,
    });
  });

  it('leaves anything else unknown and not retryable', () => {
    expect(classifyTransportFailure(new RangeError('the SDK ran out of something'))).toEqual({
      kind: 'unknown',
      message: 'the SDK ran out of something',
      retryable: false,
    });
  });
});

describe('isContextOverflowText', () => {
  it('does not mistake rate-limit wording for a context overflow', () => {
    expect(isContextOverflowText('Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000')).toBe(false);
    expect(isContextOverflowText('Input is too long for requested model.')).toBe(true);
  });
});
