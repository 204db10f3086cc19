import { AgentError, modelError, type ModelError } from '../domain/errors.js';
import { redactModelError } from '../domain/redact.js';
import { abortReasonText } from './classify-http.js';
import { IDLE, idleMessage, withinIdle } from './idle.js';
import type { Model, ModelPricing, ModelRequest, ModelStreamEvent } from './port.js';
import { resolvePricing, type PriceTable } from './pricing.js';

/** What the official SDK adapters (openai, @anthropic-ai/sdk) share in their options. */
export interface SdkModelOptions {
  model: string;
  baseURL?: string;
  apiKey?: string;
  /** `Model.name` (used in events and fallback); defaults to `model`. */
  name?: string;
  pricing?: ModelPricing;
  priceTable?: PriceTable;
  /**
   * Per request until the response starts, then again for every silence of the body: a stream
   * that sends its headers and a chunk, then stalls, ends with a `timeout` error.
   */
  timeoutMs?: number;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

/** Client options for an official SDK: its own retries are off, since retries belong to the master loop only. */
export function sdkClientOptions(options: SdkModelOptions) {
  return {
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    maxRetries: 0,
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    ...(options.headers ? { defaultHeaders: options.headers } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
}

/** An environment variable where there is a `process` (the adapters also run in browsers and workers). */
export function readEnv(name: string): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name] || undefined;
}

/** Builds the SDK client; a constructor error becomes a typed InvalidOptions naming the adapter. */
export function createClient<Client>(adapter: string, create: () => Client): Client {
  try {
    return create();
  } catch (error) {
    throw new AgentError('InvalidOptions', `${adapter}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * The SDK client, made on first use from the SDK loaded then (see optional-sdk.ts). `sdk()` is the
 * loaded module for classifying errors, undefined while nothing has loaded.
 */
export function lazyClient<Sdk, Client>(
  adapter: string,
  load: () => Promise<Sdk>,
  create: (sdk: Sdk) => Client,
): { client(): Promise<Client>; sdk(): Sdk | undefined } {
  let sdk: Sdk | undefined;
  let client: Client | undefined;
  return {
    async client() {
      if (client) return client;
      const loaded = await load();
      sdk = loaded;
      client ??= createClient(adapter, () => create(loaded));
      return client;
    },
    sdk: () => sdk,
  };
}

interface StreamMapper<Item> {
  push(item: Item): Iterable<ModelStreamEvent>;
  finish(): Iterable<ModelStreamEvent>;
}

/**
 * A Model around an SDK's stream: opened per request with the signal, each provider item mapped,
 * a provider failure classified into an `error` event (never a throw), and an abort — before the
 * request or as the client's quiet end of iteration — an `aborted` error.
 */
export function sdkModel<Item>(
  options: SdkModelOptions,
  wire: {
    /** `Model.provider` (the GenAI conventions' provider name). */
    provider: string;
    open(request: ModelRequest, signal: AbortSignal): Promise<AsyncIterable<Item>>;
    mapper(): StreamMapper<Item>;
    classify(error: unknown, signal: AbortSignal): ModelError;
    /** The key(s) and auth header values this adapter sends: redacted from every error it classifies. */
    secrets: readonly string[];
  },
): Model {
  const pricing = resolvePricing(options.model, options);
  async function* stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelStreamEvent> {
    if (signal.aborted) {
      yield { type: 'error', error: modelError('aborted', abortReasonText(signal)) };
      return;
    }
    const mapper = wire.mapper();
    // Aborted by the caller, or by the body's idle limit: either way the HTTP request is cancelled.
    const request_ = new AbortController();
    const onAbort = () => request_.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const idleMs = options.timeoutMs;
    let iterator: AsyncIterator<Item> | undefined;
    try {
      const idle = () => request_.abort(new Error('idle'));
      const opened = await withinIdle(wire.open(request, request_.signal), idleMs, idle);
      if (opened === IDLE) {
        yield { type: 'error', error: modelError('timeout', idleMessage(idleMs ?? 0)) };
        return;
      }
      iterator = opened[Symbol.asyncIterator]();
      for (;;) {
        const next = await withinIdle(iterator.next(), idleMs, idle);
        if (next === IDLE) {
          yield { type: 'error', error: modelError('timeout', idleMessage(idleMs ?? 0)) };
          return;
        }
        if (next.done) break;
        yield* mapper.push(next.value);
      }
    } catch (error) {
      // The one place a provider's own words (a 401 body may echo the key) become an error event.
      yield { type: 'error', error: redactModelError(wire.classify(error, signal), wire.secrets) };
      return;
    } finally {
      signal.removeEventListener('abort', onAbort);
      // Stopped early (an error, the consumer closed us): the SDK stream releases the response body.
      if (iterator?.return) void iterator.return().catch(() => undefined);
    }
    // The clients end the iteration quietly when their request is aborted.
    if (signal.aborted) {
      yield { type: 'error', error: modelError('aborted', abortReasonText(signal)) };
      return;
    }
    yield* mapper.finish();
  }
  return {
    name: options.name ?? options.model,
    provider: wire.provider,
    ...(pricing ? { pricing } : {}),
    stream: (request, { signal }) => stream(request, signal),
  };
}
