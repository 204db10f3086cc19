import { modelError, type ErrorKind } from '../domain/errors.js';
import type { Message, Usage } from '../domain/messages.js';
import type { Model, ModelPricing, ModelRequest, ModelStreamEvent, ToolSpec } from '../model/port.js';
import { realClock, sleep, whenAborted, type Clock } from './clock.js';

/** A tool call the scripted model emits: parsed `arguments` (default `{}`) or exact `rawArguments` JSON text. */
export type ScriptedToolCall =
  | { id?: string; name: string; arguments?: Record<string, unknown>; rawArguments?: undefined }
  | { id?: string; name: string; rawArguments: string; arguments?: undefined };

/** What one model call streams. */
export interface ScriptEntry {
  text?: string;
  thinking?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default: `toolUse` when there are tool calls, else `stop`. With `length` the last tool call is cut in half. */
  stopReason?: 'stop' | 'toolUse' | 'length';
  usage?: Usage;
  /** Ends the stream with this classified error after the content. */
  error?: { kind: ErrorKind; retryAfterMs?: number; message?: string; status?: number };
  /** Waits this long on the model's clock before the first delta. */
  delayMs?: number;
  /** Holds the stream open after the content until the request is aborted. */
  stall?: boolean;
}

/** One entry per model call, or a function of the request; a function returning `undefined` ends the script. */
export type Script = readonly ScriptEntry[] | ((request: ModelRequest, callIndex: number) => ScriptEntry | undefined);

/** A deep copy of a request as the model received it. */
export interface RecordedRequest {
  messages: Message[];
  tools: ToolSpec[];
  systemPrompt?: string;
}

/** A model call the script had no entry for. */
export interface ScriptOverrun {
  callIndex: number;
  message: string;
}

export interface ScriptedModelOptions {
  name?: string;
  /** `Model.provider`, as a provider adapter would report it. */
  provider?: string;
  clock?: Clock;
  pricing?: ModelPricing;
  /** Default true. Benchmarks turn it off: copying a long history on every call is quadratic. */
  recordRequests?: boolean;
}

export interface ScriptedModel extends Model {
  /** Every request, in call order, overruns included (empty when `recordRequests` is false). */
  readonly requests: readonly RecordedRequest[];
  /** How many times `stream` was called. */
  readonly calls: number;
  /** Calls beyond the script; each also threw from its stream iterator. */
  readonly overruns: readonly ScriptOverrun[];
}

/**
 * A deterministic Model for tests. Events are yielded without timers (only `delayMs` touches the
 * clock), so thousands of turns stay cheap; an abort ends the stream with an `aborted` error event
 * before the next event.
 */
export function scriptedModel(script: Script, options: ScriptedModelOptions = {}): ScriptedModel {
  const name = options.name ?? 'scripted';
  const clock = options.clock ?? realClock;
  const requests: RecordedRequest[] = [];
  const overruns: ScriptOverrun[] = [];
  let calls = 0;

  const recordRequests = options.recordRequests ?? true;
  const entryFor = (request: ModelRequest, callIndex: number): ScriptEntry | undefined =>
    typeof script === 'function' ? script(request, callIndex) : script[callIndex];

  return {
    name,
    ...(options.provider !== undefined ? { provider: options.provider } : {}),
    ...(options.pricing ? { pricing: options.pricing } : {}),
    get requests() {
      return requests;
    },
    get calls() {
      return calls;
    },
    get overruns() {
      return overruns;
    },
    stream(request, { signal }) {
      const callIndex = calls++;
      let seen: ModelRequest = request;
      if (recordRequests) {
        // The script function sees the recorded copy, never the runtime's live arrays.
        const recorded = recordRequest(request);
        requests.push(recorded);
        seen = recorded;
      }
      let entry: ScriptEntry | undefined;
      try {
        entry = entryFor(seen, callIndex);
      } catch (cause) {
        // A throwing script function surfaces from the iterator, like any broken provider.
        return failing(`scriptedModel '${name}': the script function threw on call #${callIndex}`, cause);
      }
      if (entry === undefined) {
        const message =
          typeof script === 'function'
            ? `scriptedModel '${name}': the script function returned no entry for model call #${callIndex} (0-based)`
            : `scriptedModel '${name}': model call #${callIndex} (0-based) is beyond a script of ${script.length} entries`;
        overruns.push({ callIndex, message });
        return failing(message);
      }
      return play(entry, { name, callIndex, signal, clock });
    },
  };
}

function recordRequest(request: ModelRequest): RecordedRequest {
  const copy: RecordedRequest = { messages: deepCopy(request.messages), tools: deepCopy(request.tools) };
  if (request.systemPrompt !== undefined) copy.systemPrompt = request.systemPrompt;
  return copy;
}

/** `structuredClone` fails on functions (e.g. in custom messages' `data`); JSON keeps what it can. */
function deepCopy<T>(value: T): T {
  try {
    return structuredClone(value);
  } catch {
    return JSON.parse(JSON.stringify(value)) as T;
  }
}

/** The iterator of an overrun: it throws on the first `next()`, which the runtime sees as an unknown error. */
async function* failing(message: string, cause?: unknown): AsyncGenerator<ModelStreamEvent> {
  throw cause === undefined ? new Error(message) : new Error(message, { cause });
}

interface PlayContext {
  name: string;
  callIndex: number;
  signal: AbortSignal;
  clock: Clock;
}

async function* play(entry: ScriptEntry, ctx: PlayContext): AsyncGenerator<ModelStreamEvent> {
  const { signal } = ctx;
  const aborted: ModelStreamEvent = { type: 'error', error: modelError('aborted', 'request aborted') };
  if (signal.aborted) {
    yield aborted;
    return;
  }
  yield { type: 'start', model: ctx.name };
  if (
    entry.delayMs !== undefined &&
    entry.delayMs > 0 &&
    (await sleep(ctx.clock, entry.delayMs, signal)) === 'aborted'
  ) {
    yield aborted;
    return;
  }
  // The consumer may abort while handling any event, so the signal is checked before each one.
  for (const event of contentEvents(entry, ctx.callIndex)) {
    if (signal.aborted) {
      yield aborted;
      return;
    }
    yield event;
  }
  if (signal.aborted) {
    yield aborted;
    return;
  }
  if (entry.error) {
    const { kind, message, retryAfterMs, status } = entry.error;
    yield { type: 'error', error: modelError(kind, message, { retryAfterMs, status }) };
    return;
  }
  if (entry.stall) {
    await whenAborted(signal);
    yield aborted;
    return;
  }
  const stopReason = entry.stopReason ?? (entry.toolCalls?.length ? 'toolUse' : 'stop');
  yield { type: 'done', stopReason };
}

/** Thinking, text, tool calls, usage: the content of an entry as stream events, in that order. */
function* contentEvents(entry: ScriptEntry, callIndex: number): Generator<ModelStreamEvent> {
  for (const delta of chunks(entry.thinking ?? '')) yield { type: 'thinkingDelta', delta };
  for (const delta of chunks(entry.text ?? '')) yield { type: 'textDelta', delta };
  const toolCalls = entry.toolCalls ?? [];
  for (let index = 0; index < toolCalls.length; index++) {
    const call = toolCalls[index];
    const raw = call.rawArguments ?? JSON.stringify(call.arguments ?? {});
    // A length-stopped message ends inside its last tool call's arguments.
    const cut = entry.stopReason === 'length' && index === toolCalls.length - 1;
    yield { type: 'toolCallStart', index, id: call.id ?? `call_${callIndex}_${index}`, name: call.name };
    for (const argumentsDelta of chunks(cut ? raw.slice(0, Math.floor(raw.length / 2)) : raw)) {
      yield { type: 'toolCallDelta', index, argumentsDelta };
    }
    if (!cut) yield { type: 'toolCallEnd', index };
  }
  if (entry.usage) yield { type: 'usage', usage: { ...entry.usage } };
}

/** Splits text into about three pieces, never inside a surrogate pair. */
function chunks(text: string, count = 3): string[] {
  if (text === '') return [];
  const size = Math.max(1, Math.ceil(text.length / count));
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    const code = text.charCodeAt(end);
    if (end < text.length && code >= 0xdc00 && code <= 0xdfff) end++;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}
