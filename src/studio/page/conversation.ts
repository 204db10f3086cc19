import type { AssistantMessage, Message, ToolResultMessage } from '../../domain/messages.js';
import type { WireEvent } from '../protocol.js';
import { h, pretty } from './dom.js';

/**
 * The conversation: the committed history, then the turn in progress as its events tell it — the
 * reply growing while it streams, each tool call with its arguments, approval, progress and result.
 */

/** Where a streaming tool call keeps its arguments' JSON text until the reply ends. */
const PARTIAL_ARGUMENTS = '\u2026partial JSON';

/** Messages drawn at most; earlier ones wait behind a button (a session of thousands of turns). */
const SHOWN_MESSAGES = 120;

export interface ToolCallView {
  id: string;
  name: string;
  arguments: unknown;
  approval: 'asked' | 'approved' | 'denied' | null;
  started: boolean;
  updates: number;
  lastUpdate: unknown;
  result: { content: string; isError: boolean } | null;
}

export interface TurnInFlight {
  turnIndex: number;
  /** The reply as streamed so far (content blocks by index), or as ended. */
  reply: AssistantMessage | null;
  streaming: boolean;
  model: string | null;
  calls: Map<string, ToolCallView>;
  notes: string[];
}

/** The open turn, from its events (turnStart on). */
export function turnInFlight(events: readonly WireEvent[]): TurnInFlight | null {
  const first = events[0];
  if (!first || first.type !== 'turnStart') return null;
  const turn: TurnInFlight = {
    turnIndex: first.turnIndex,
    reply: null,
    streaming: false,
    model: null,
    calls: new Map(),
    notes: [],
  };
  const call = (id: string, name: string): ToolCallView => {
    let view = turn.calls.get(id);
    if (!view) {
      view = { id, name, arguments: {}, approval: null, started: false, updates: 0, lastUpdate: null, result: null };
      turn.calls.set(id, view);
    }
    return view;
  };
  for (const event of events) {
    switch (event.type) {
      case 'beforeModelCall':
        turn.model = event.model;
        break;
      case 'messageStart':
        turn.reply = { ...event.message, content: [] };
        turn.streaming = true;
        break;
      case 'messageUpdate': {
        const reply = turn.reply ?? { role: 'assistant', content: [], stopReason: 'stop' };
        turn.reply = reply;
        const { delta } = event;
        const block = reply.content[delta.index];
        if (delta.type === 'toolCall') {
          const partial = block && block.type === 'toolCall' ? String(block.arguments[PARTIAL_ARGUMENTS] ?? '') : '';
          reply.content[delta.index] = {
            type: 'toolCall',
            id: delta.id,
            name: delta.name,
            arguments: { [PARTIAL_ARGUMENTS]: partial + delta.argumentsDelta },
          };
        } else {
          const text = block && block.type === delta.type ? block.text : '';
          reply.content[delta.index] = { type: delta.type, text: text + delta.text };
        }
        break;
      }
      case 'messageEnd':
        turn.reply = event.message;
        turn.streaming = false;
        if (event.error) turn.notes.push(`model error: ${event.error.kind} — ${event.error.message}`);
        break;
      case 'retry':
        turn.notes.push(`retry ${event.attempt} in ${event.delayMs} ms (${event.error.kind})`);
        break;
      case 'toolApprovalRequested':
        Object.assign(call(event.toolCallId, event.toolName), { approval: 'asked', arguments: event.arguments });
        break;
      case 'toolApprovalResolved':
        call(event.toolCallId, event.toolName).approval = event.approved ? 'approved' : 'denied';
        break;
      case 'toolExecutionStart':
        Object.assign(call(event.toolCallId, event.toolName), { started: true, arguments: event.arguments });
        break;
      case 'toolExecutionUpdate': {
        const view = call(event.toolCallId, event.toolName);
        view.updates += 1;
        view.lastUpdate = event.partial;
        break;
      }
      case 'toolExecutionEnd':
        call(event.toolCallId, event.toolName).result = { content: event.result, isError: event.isError };
        break;
      default:
        break;
    }
  }
  return turn;
}

export interface ConversationInput {
  history: readonly Message[];
  /** The open turn's events; its reply and results are drawn unless `committed` (then they are in history). */
  turn: TurnInFlight | null;
  committed: boolean;
  /** The model is being called and nothing has streamed yet. */
  waitingForModel: boolean;
}

/** Draws the conversation; the history part is rebuilt only when it changed. */
export class ConversationView {
  private drawnHistory: readonly Message[] = [];
  private showAll = false;

  constructor(
    private readonly history: HTMLElement,
    private readonly inflight: HTMLElement,
  ) {}

  render(input: ConversationInput): void {
    if (input.history !== this.drawnHistory) this.renderHistory(input.history);
    this.renderInFlight(input);
  }

  private renderHistory(history: readonly Message[]): void {
    this.drawnHistory = history;
    const results = new Map<string, ToolResultMessage>();
    for (const message of history) if (message.role === 'toolResult') results.set(message.toolCallId, message);
    const answered = new Set<string>();
    const shownFrom = this.showAll ? 0 : Math.max(0, history.length - SHOWN_MESSAGES);
    const items: HTMLElement[] = [];
    if (shownFrom > 0) {
      const more = h('button', { type: 'button', class: 'show-earlier' }, `show ${shownFrom} earlier messages`);
      more.addEventListener('click', () => {
        this.showAll = true;
        this.renderHistory(history);
      });
      items.push(more);
    }
    history.forEach((message, position) => {
      if (message.role === 'assistant') {
        for (const block of message.content) if (block.type === 'toolCall') answered.add(block.id);
      }
      if (position < shownFrom) return;
      if (message.role === 'toolResult' && answered.has(message.toolCallId)) return;
      items.push(messageElement(message, position, results));
    });
    if (history.length === 0) items.push(h('p', { class: 'empty' }, 'No messages yet.'));
    this.history.replaceChildren(...items);
  }

  private renderInFlight({ turn, committed, waitingForModel }: ConversationInput): void {
    const items: HTMLElement[] = [];
    if (turn && !committed) {
      if (turn.reply) {
        const element = assistantElement(turn.reply, null, turn.calls);
        element.classList.add('inflight');
        if (turn.streaming) {
          element.classList.add('streaming');
          element.dataset.streaming = 'true';
        }
        items.push(element);
      } else if (waitingForModel) {
        items.push(h('div', { class: 'msg assistant inflight waiting' }, `calling ${turn.model ?? 'the model'}…`));
      }
      // Calls the reply does not show yet (an approval asked before the reply is drawn).
      const shown = new Set(turn.reply?.content.flatMap((block) => (block.type === 'toolCall' ? [block.id] : [])));
      for (const call of turn.calls.values()) if (!shown.has(call.id)) items.push(toolElement(call));
      for (const note of turn.notes) items.push(h('div', { class: 'note' }, note));
    }
    this.inflight.replaceChildren(...items);
  }
}

function messageElement(message: Message, position: number, results: Map<string, ToolResultMessage>): HTMLElement {
  switch (message.role) {
    case 'user':
      return h(
        'div',
        { class: 'msg user', 'data-role': 'user', 'data-position': position },
        h('pre', { class: 'text' }, message.content),
      );
    case 'assistant':
      return assistantElement(message, position, null, results);
    case 'toolResult':
      return h(
        'div',
        {
          class: `msg toolResult${message.isError ? ' error' : ''}`,
          'data-role': 'toolResult',
          'data-position': position,
        },
        h('span', { class: 'label' }, `${message.toolName} · ${message.toolCallId}`),
        h('pre', { class: 'result' }, message.content),
      );
    case 'custom':
      return h(
        'div',
        { class: 'msg custom', 'data-role': 'custom', 'data-position': position },
        h('span', { class: 'label' }, message.customType),
        h('pre', { class: 'text' }, message.content),
      );
  }
}

function assistantElement(
  message: AssistantMessage,
  position: number | null,
  calls: Map<string, ToolCallView> | null,
  results?: Map<string, ToolResultMessage>,
): HTMLElement {
  const element = h('div', { class: 'msg assistant', 'data-role': 'assistant', 'data-position': position });
  for (const block of message.content) {
    if (!block) continue;
    if (block.type === 'text') element.append(h('pre', { class: 'text' }, block.text));
    else if (block.type === 'thinking')
      element.append(h('details', { class: 'thinking' }, h('summary', {}, 'thinking'), h('pre', {}, block.text)));
    else {
      const live = calls?.get(block.id);
      const result = results?.get(block.id);
      const partial = block.arguments[PARTIAL_ARGUMENTS];
      element.append(
        toolElement(
          live ?? {
            id: block.id,
            name: block.name,
            arguments: typeof partial === 'string' ? partial : block.arguments,
            approval: null,
            started: result !== undefined,
            updates: 0,
            lastUpdate: null,
            result: result ? { content: result.content, isError: result.isError } : null,
          },
        ),
      );
    }
  }
  if (message.stopReason === 'error' || message.stopReason === 'aborted')
    element.append(
      h(
        'div',
        { class: 'note' },
        `stopped: ${message.stopReason}${message.errorMessage ? ` — ${message.errorMessage}` : ''}`,
      ),
    );
  return element;
}

function toolStatus(call: ToolCallView): string {
  if (call.result)
    return call.result.isError ? (/^(aborted|cancelled)/.test(call.result.content) ? 'cancelled' : 'error') : 'ok';
  if (call.approval === 'asked') return 'asked';
  if (call.approval === 'denied') return 'denied';
  if (call.started) return 'running';
  return call.approval === 'approved' ? 'approved' : 'requested';
}

function toolElement(call: ToolCallView): HTMLElement {
  const status = toolStatus(call);
  const args = typeof call.arguments === 'string' ? call.arguments : pretty(call.arguments);
  return h(
    'div',
    { class: `tool status-${status}`, 'data-tool-call-id': call.id, 'data-status': status },
    h(
      'div',
      { class: 'tool-head' },
      h('span', { class: 'tool-name' }, call.name),
      h('span', { class: 'tool-id' }, call.id),
      h('span', { class: 'badge' }, status),
    ),
    h('pre', { class: 'args' }, args),
    call.updates > 0 && !call.result
      ? h(
          'div',
          { class: 'progress', 'data-updates': call.updates },
          `progress (${call.updates}): ${pretty(call.lastUpdate, 300)}`,
        )
      : null,
    call.result ? h('pre', { class: `result${call.result.isError ? ' error' : ''}` }, call.result.content) : null,
  );
}
