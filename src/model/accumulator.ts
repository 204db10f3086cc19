import { modelError, type ModelError } from '../domain/errors.js';
import type { MessageDelta } from '../domain/events.js';
import { redactModelError, redactSecrets } from '../domain/redact.js';
import type { AssistantBlock, AssistantMessage, StopReason, Usage } from '../domain/messages.js';
import type { ModelStreamEvent } from './port.js';

/** How a model stream ended, as far as the accumulator has seen. */
export type StreamTerminal =
  { kind: 'done'; stopReason: 'stop' | 'toolUse' | 'length' } | { kind: 'error'; error: ModelError };

/**
 * A tool call whose arguments cannot be used: its JSON does not parse to an object
 * (`malformedJson`), or it was cut off — no `toolCallEnd`, or any unusable call of a
 * `length`-stopped message (`truncated`). Its block in the message carries `{}` as arguments.
 */
export interface InvalidToolCall {
  id: string;
  name: string;
  /** Position of the call's block in the message content (the same index as its deltas). */
  index: number;
  /** The provider's tool-call index from the stream. */
  providerIndex: number;
  rawArguments: string;
  reason: 'malformedJson' | 'truncated';
}

type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false };

interface ToolCallDraft {
  type: 'toolCall';
  providerIndex: number;
  /** Position in the message content; blocks are never removed, so it is stable. */
  blockIndex: number;
  id: string;
  name: string;
  raw: string;
  /** A toolCallStart named it (a call opened by a stray fragment has not been started). */
  started: boolean;
  ended: boolean;
  /** Parse memo, valid while `raw` still has the length it was parsed at. */
  parsed?: ParsedArguments;
  parsedAtLength: number;
}

type Draft = { type: 'text'; text: string } | { type: 'thinking'; text: string } | ToolCallDraft;

type ArgumentsFrom = 'none' | 'completeOnly' | 'whateverParses';

const STREAM_WITHOUT_TERMINAL = 'stream ended without a terminal event';

/**
 * Folds one model stream into one assistant message. Blocks keep their order of first appearance;
 * consecutive text (or thinking) deltas extend the last block, any other kind in between opens a
 * new one. Tool calls are keyed by the provider's index and their JSON is parsed once, at the end.
 */
export class StreamAccumulator {
  private readonly drafts: Draft[] = [];
  /** Provider tool-call index → the draft currently bound to it. */
  private readonly toolCallsByIndex = new Map<number, ToolCallDraft>();
  private readonly usedIds = new Set<string>();
  private usage: Usage | undefined;
  private ended: StreamTerminal | null = null;

  constructor(private readonly modelName: string) {}

  /** Applies one stream event and returns the `messageUpdate` deltas it produces, in order. */
  push(event: ModelStreamEvent): MessageDelta[] {
    const deltas: MessageDelta[] = [];
    this.pushTo(event, (delta) => deltas.push(delta));
    return deltas;
  }

  /** Applies one stream event, handing the `messageUpdate` deltas it produces to `onDelta` in order (no array per event). */
  pushTo(event: ModelStreamEvent, onDelta: (delta: MessageDelta) => void): void {
    if (this.ended) return;
    switch (event.type) {
      case 'thinkingDelta':
      case 'textDelta':
        return this.pushText(event.type === 'textDelta' ? 'text' : 'thinking', event.delta, onDelta);
      case 'toolCallStart':
        return this.startToolCall(event.index, event.id, event.name, onDelta);
      case 'toolCallDelta':
        return this.appendArguments(event.index, event.argumentsDelta, onDelta);
      case 'toolCallEnd': {
        const draft = this.toolCallsByIndex.get(event.index);
        if (draft) draft.ended = true;
        return;
      }
      case 'usage':
        this.usage = event.usage;
        return;
      case 'done':
        this.ended = { kind: 'done', stopReason: event.stopReason };
        return;
      case 'error':
        this.fail(event.error);
        return;
      default:
        // `start` carries no content; unknown event types from a foreign adapter are ignored.
        return;
    }
  }

  /** A text or thinking delta, given by its fields: the stream's most frequent event needs no event object. */
  pushText(type: 'text' | 'thinking', delta: string, onDelta: (delta: MessageDelta) => void): void {
    if (this.ended || delta === '') return;
    const last = this.drafts[this.drafts.length - 1];
    if (last && last.type === type) {
      last.text += delta;
    } else {
      this.drafts.push({ type, text: delta });
    }
    onDelta({ type, index: this.drafts.length - 1, text: delta });
  }

  /**
   * Ends the stream with an error (the runtime's boundary: an invalid event, a throw, a timeout);
   * later events are ignored.
   */
  fail(error: ModelError): void {
    // Every model error is recorded here: its text is redacted once, before any event, result or store sees it.
    if (!this.ended) this.ended = { kind: 'error', error: redactModelError(error) };
  }

  get terminal(): StreamTerminal | null {
    return this.ended;
  }

  /**
   * The message so far. Its `stopReason` is a `'stop'` placeholder (the real one is known only at
   * the end) and tool calls carry `{}`: arguments are parsed once, by `finish()` or `abort()`.
   */
  get partial(): AssistantMessage {
    return this.build('stop', 'none');
  }

  /**
   * The final message. A stream that finished with neither `done` nor `error` counts as a network
   * error; from then on `terminal` reports it. `done: stop` with tool calls becomes `toolUse`; an
   * `error` of kind `aborted` becomes stopReason `aborted`.
   */
  finish(): AssistantMessage {
    if (!this.ended) this.ended = { kind: 'error', error: modelError('network', STREAM_WITHOUT_TERMINAL) };
    const terminal = this.ended;
    if (terminal.kind === 'error') {
      const stopReason: StopReason = terminal.error.kind === 'aborted' ? 'aborted' : 'error';
      return this.build(stopReason, 'completeOnly', terminal.error.message);
    }
    const hasToolCalls = this.drafts.some((draft) => draft.type === 'toolCall');
    return this.build(terminal.stopReason === 'stop' && hasToolCalls ? 'toolUse' : terminal.stopReason, 'completeOnly');
  }

  /**
   * The message of a stream cut short by the caller: stopReason `aborted`, every block received so
   * far kept (tool calls with their parsed arguments, or `{}`). Later events are ignored.
   */
  abort(reason?: string): AssistantMessage {
    this.fail(modelError('aborted', reason ?? 'aborted'));
    return this.build('aborted', 'whateverParses', reason === undefined ? undefined : redactSecrets(reason));
  }

  /** Tool calls whose arguments cannot be used, in content order (see `InvalidToolCall`). */
  get invalidToolCalls(): InvalidToolCall[] {
    const truncatedByLength = this.ended?.kind === 'done' && this.ended.stopReason === 'length';
    const invalid: InvalidToolCall[] = [];
    this.drafts.forEach((draft, index) => {
      if (draft.type !== 'toolCall') return;
      let reason: InvalidToolCall['reason'] | null = null;
      if (!draft.ended) reason = 'truncated';
      else if (!this.parse(draft).ok) reason = truncatedByLength ? 'truncated' : 'malformedJson';
      if (reason) {
        invalid.push({
          id: draft.id,
          name: draft.name,
          index,
          providerIndex: draft.providerIndex,
          rawArguments: draft.raw,
          reason,
        });
      }
    });
    return invalid;
  }

  private startToolCall(providerIndex: number, id: string, name: string, onDelta: (delta: MessageDelta) => void): void {
    const bound = this.toolCallsByIndex.get(providerIndex);
    // A second start for an open index would glue two calls into one: the response is invalid.
    // After the call's end the index names a new call. (A call opened by a stray fragment has no
    // start yet: its start names it.)
    if (bound && !bound.ended) {
      if (!bound.started) {
        bound.started = true;
        bound.name = name;
        return;
      }
      const problem = `a second toolCallStart for the open tool-call index ${providerIndex}`;
      this.fail(modelError('invalidResponse', `invalid model response: ${problem}`));
      return;
    }
    const draft = this.openToolCall(providerIndex, id, name, true);
    onDelta({ type: 'toolCall', index: draft.blockIndex, id: draft.id, name: draft.name, argumentsDelta: '' });
  }

  private appendArguments(providerIndex: number, fragment: string, onDelta: (delta: MessageDelta) => void): void {
    // A fragment for an index never started still opens a call, so no arguments are lost.
    const draft = this.toolCallsByIndex.get(providerIndex) ?? this.openToolCall(providerIndex, '', '', false);
    draft.raw += fragment;
    onDelta({ type: 'toolCall', index: draft.blockIndex, id: draft.id, name: draft.name, argumentsDelta: fragment });
  }

  private openToolCall(providerIndex: number, id: string, name: string, started: boolean): ToolCallDraft {
    const draft: ToolCallDraft = {
      type: 'toolCall',
      providerIndex,
      blockIndex: this.drafts.length,
      id: this.uniqueId(id === '' ? `call_${providerIndex}` : id),
      name,
      raw: '',
      started,
      ended: false,
      parsedAtLength: -1,
    };
    this.drafts.push(draft);
    this.toolCallsByIndex.set(providerIndex, draft);
    return draft;
  }

  /** Parity pairs results to calls by id, so two calls of one message must never share one. */
  private uniqueId(candidate: string): string {
    let id = candidate;
    for (let n = 2; this.usedIds.has(id); n++) id = `${candidate}_${n}`;
    this.usedIds.add(id);
    return id;
  }

  private parse(draft: ToolCallDraft): ParsedArguments {
    if (draft.parsed && draft.parsedAtLength === draft.raw.length) return draft.parsed;
    draft.parsed = parseArguments(draft.raw);
    draft.parsedAtLength = draft.raw.length;
    return draft.parsed;
  }

  /**
   * `completeOnly`: arguments only for calls whose `toolCallEnd` came (the rest are invalid, `{}`);
   * `whateverParses`: an aborted message keeps whatever arguments parse; `none`: all `{}`.
   */
  private build(stopReason: StopReason, argumentsFrom: ArgumentsFrom, errorMessage?: string): AssistantMessage {
    const content: AssistantBlock[] = this.drafts.map((draft): AssistantBlock => {
      if (draft.type !== 'toolCall') return { type: draft.type, text: draft.text };
      const usable = argumentsFrom === 'whateverParses' || (argumentsFrom === 'completeOnly' && draft.ended);
      const parsed = usable ? this.parse(draft) : undefined;
      const args = parsed?.ok ? parsed.value : {};
      return { type: 'toolCall', id: draft.id, name: draft.name, arguments: args };
    });
    const message: AssistantMessage = { role: 'assistant', content, stopReason, model: this.modelName };
    if (this.usage) message.usage = { ...this.usage };
    if (errorMessage !== undefined) message.errorMessage = errorMessage;
    return message;
  }
}

/** Tool-call arguments from their JSON text: blank means `{}`; anything but a JSON object fails. */
function parseArguments(raw: string): ParsedArguments {
  if (raw.trim() === '') return { ok: true, value: {} };
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      return { ok: true, value: value as Record<string, unknown> };
    }
    return { ok: false };
  } catch {
    return { ok: false };
  }
}
