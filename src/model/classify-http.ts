import { modelError, type ModelError } from '../domain/errors.js';

/**
 * Shared classification of provider failures into the ModelError taxonomy, used by every adapter.
 * It knows HTTP and the providers' documented error bodies, never an SDK: adapters pass plain data.
 *
 * Status mapping (decided here, once, for all adapters):
 * - 429 → rateLimit (retry-after honoured); 429 with code `insufficient_quota` → auth: an exhausted
 *   quota is an account problem that no retry fixes.
 * - 529 (Anthropic "overloaded"), 503, 500 and any other 5xx not listed below → overloaded: the
 *   provider answered but could not serve; a retry later (or a fallback model) may succeed.
 * - 502 → network: a gateway failed to reach the upstream (proxies, Ollama restarting), a transport
 *   fault rather than a provider verdict.
 * - 504 and 408 → timeout.
 * - 401/403 → auth. 413 → contextOverflow (the request is too large; compaction is the cure).
 * - 400 (or 413/422) whose body names a context-length error → contextOverflow; other 4xx → badRequest.
 * `retryAfterMs` is attached whenever the response carries `retry-after-ms` or `retry-after`.
 */

/** Response headers as the SDKs expose them: a fetch `Headers` or a plain record. */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | undefined>;

/** A failure the provider reported: an HTTP error response, or an error event inside a stream. */
export interface ProviderFailure {
  /** HTTP status; absent for an error event received mid-stream (the response itself was 200). */
  status?: number;
  headers?: HeaderSource;
  message: string;
  /** The provider's machine-readable error type/code from the body (`overloaded_error`, `context_length_exceeded`, …). */
  codes?: ReadonlyArray<string | null | undefined>;
  /** The raw response body, searched for context-length wording when `message` is a summary. */
  body?: string;
}

/** Context-length errors as OpenAI, Anthropic and the common OpenAI-compatible servers word them. */
const CONTEXT_OVERFLOW_CODES = new Set([
  'context_length_exceeded',
  'request_too_large',
  'model_context_window_exceeded',
]);
const CONTEXT_OVERFLOW_PATTERNS: readonly RegExp[] = [
  /maximum context length/i, // OpenAI, vLLM
  /prompt is too long/i, // Anthropic
  /context[ _-]?(length|window)[ _-]?(exceeded|is exceeded)/i,
  /exceed(s|ed)? (the )?([\w']+ ){0,2}context (length|window|size)/i, // llama.cpp, LM Studio, Ollama
  /input (token count|is too long)/i,
];

/** Error types/codes of mid-stream error events (no HTTP status) and what they mean. */
const KIND_BY_CODE: Readonly<Record<string, ModelError['kind']>> = {
  rate_limit_error: 'rateLimit', // Anthropic
  rate_limit_exceeded: 'rateLimit', // OpenAI
  overloaded_error: 'overloaded',
  api_error: 'overloaded',
  server_error: 'overloaded',
  timeout_error: 'timeout',
  authentication_error: 'auth',
  permission_error: 'auth',
  invalid_api_key: 'auth',
  insufficient_quota: 'auth',
  billing_error: 'auth',
  invalid_request_error: 'badRequest',
  not_found_error: 'badRequest',
};

export function isContextOverflowText(text: string): boolean {
  return CONTEXT_OVERFLOW_PATTERNS.some((pattern) => pattern.test(text));
}

function presentCodes(failure: ProviderFailure): string[] {
  return (failure.codes ?? []).filter((code): code is string => typeof code === 'string' && code !== '');
}

function headerValue(headers: HeaderSource | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof headers.get === 'function')
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  return key === undefined ? undefined : record[key];
}

/**
 * How long the provider asks us to wait: `retry-after-ms` (milliseconds, OpenAI's extension) wins,
 * else `retry-after` as delta-seconds or an HTTP-date (RFC 9110, section 10.2.3). Unparseable → undefined.
 */
export function retryAfterMsFrom(headers: HeaderSource | undefined, now: number = Date.now()): number | undefined {
  const ms = headerValue(headers, 'retry-after-ms');
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.round(Number(ms));
  const after = headerValue(headers, 'retry-after');
  if (after === undefined) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(after)) return Math.round(Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function kindFromStatus(status: number, codes: string[], overflow: boolean): ModelError['kind'] {
  if (status === 429) return codes.includes('insufficient_quota') ? 'auth' : 'rateLimit';
  if (status === 401 || status === 403) return 'auth';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 502) return 'network';
  if (status >= 500) return 'overloaded';
  if (status === 413 || overflow) return 'contextOverflow';
  if (status >= 400) return 'badRequest';
  return 'unknown';
}

/** Classifies an HTTP error response or a mid-stream error event of any provider. */
export function classifyProviderFailure(failure: ProviderFailure, now: number = Date.now()): ModelError {
  const codes = presentCodes(failure);
  const overflow =
    codes.some((code) => CONTEXT_OVERFLOW_CODES.has(code)) ||
    isContextOverflowText(failure.message) ||
    (failure.body !== undefined && isContextOverflowText(failure.body));
  let kind: ModelError['kind'];
  if (failure.status !== undefined) {
    kind = kindFromStatus(failure.status, codes, overflow);
  } else if (overflow) {
    kind = 'contextOverflow';
  } else {
    kind = codes.map((code) => KIND_BY_CODE[code]).find((known) => known !== undefined) ?? 'unknown';
  }
  const retryAfterMs = retryAfterMsFrom(failure.headers, now);
  return modelError(kind, failure.message, {
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    ...(failure.status !== undefined ? { status: failure.status } : {}),
  });
}

/** Node/undici error codes of a transport that failed or was cut. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Errors of a body that is not the provider's protocol (malformed SSE JSON, a part that fails validation). */
const INVALID_BODY_NAMES = new Set(['SyntaxError', 'AI_JSONParseError', 'AI_TypeValidationError']);
const INVALID_BODY_TEXT = new RegExp(
  [
    'malformed server-sent event',
    'JSON parsing failed',
    'could not parse .*json',
    'unexpected token .* in json',
    'is not valid JSON',
  ].join('|'),
  'i',
);

function causeChain(error: unknown): Array<Record<string, unknown>> {
  const chain: Array<Record<string, unknown>> = [];
  let current: unknown = error;
  while (
    typeof current === 'object' &&
    current !== null &&
    chain.length < 8 &&
    !chain.includes(current as Record<string, unknown>)
  ) {
    chain.push(current as Record<string, unknown>);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

function describe(error: unknown): string {
  const chain = causeChain(error);
  const messages = chain.map((link) => (typeof link.message === 'string' ? link.message : '')).filter((m) => m !== '');
  if (messages.length > 0) return [...new Set(messages)].join(': ');
  return typeof error === 'string' ? error : 'unknown failure';
}

/**
 * Classifies a thrown failure that carries no HTTP response: the caller's abort, a client timeout,
 * a refused/reset connection, a stream cut short. An abort of `signal` wins over everything else.
 */
export function classifyTransportFailure(error: unknown, signal?: AbortSignal): ModelError {
  const message = describe(error);
  if (signal?.aborted) return modelError('aborted', abortReasonText(signal));
  const chain = causeChain(error);
  const names = chain.map((link) => link.name).filter((name): name is string => typeof name === 'string');
  const codes = chain.map((link) => link.code).filter((code): code is string => typeof code === 'string');
  if (names.includes('AbortError') || names.includes('APIUserAbortError')) return modelError('aborted', message);
  // The body is not the protocol: a data line that is not JSON, an event the SDK cannot validate.
  if (names.some((name) => INVALID_BODY_NAMES.has(name)) || INVALID_BODY_TEXT.test(message)) {
    return modelError('invalidResponse', message);
  }
  if (
    names.includes('TimeoutError') ||
    names.includes('APIConnectionTimeoutError') ||
    codes.some((code) => TIMEOUT_CODES.has(code)) ||
    /timed out/i.test(message)
  ) {
    return modelError('timeout', message);
  }
  if (
    names.includes('APIConnectionError') ||
    codes.some((code) => NETWORK_CODES.has(code)) ||
    /terminated|fetch failed|socket hang up|other side closed|network|connection|cannot connect/i.test(message)
  ) {
    return modelError('network', message);
  }
  return modelError('unknown', message);
}

export function abortReasonText(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (typeof reason === 'string' && reason !== '') return reason;
  if (reason instanceof Error && reason.name !== 'AbortError' && reason.message !== '') return reason.message;
  return 'aborted';
}

/** The error event of a stream that ended before the provider said how it finished. */
export function streamEndedEarly(detail: string): ModelError {
  return modelError('network', `stream ended before it finished (${detail})`);
}

/** A successful response that carried no stream event at all: not the protocol (an HTML page, a proxy's answer). */
export function noStreamEvents(): ModelError {
  return modelError(
    'invalidResponse',
    'the response carried no stream events (an HTML page or another body that is not the protocol?)',
  );
}
