import { REJECTED_PREFIX } from '../../machines/tool-results.js';
import type { AgentEvent, AgentEventOf } from '../domain/events.js';
import type { Message } from '../domain/messages.js';
import { approvalIdOf } from './approval-id.js';
import type { UIStreamDialect } from './sdk.js';
import type { AgentchartMessageMetadata, AgentchartUIChunk } from './types.js';

/** A durable approval (no handler: the user answers it through `resolveApproval`) and the version to quote. */
export interface DurableApproval {
  version: number;
}

interface Block {
  kind: 'text' | 'reasoning';
  id: string;
  /** What the deltas wrote so far: messageEnd writes the rest of the final text. */
  written: string;
  ended: boolean;
}

interface CallPart {
  approvalId: string | null;
  /** The approval was denied or withdrawn: the result says which. */
  refused: boolean;
  ended: boolean;
  /** Its input-available was written (a part the client has). */
  available: boolean;
}

/** A result of a call this translator has not shown (a run taken over mid-turn): written with the turn's end. */
interface Unshown {
  toolCallId: string;
  result: string;
  isError: boolean;
}

/**
 * Turns a run's events into UI message chunks, in order, for one assistant message: a step per
 * turn (start-step … finish-step); text and reasoning parts as they stream; a tool part per call
 * that moves input-streaming → input-available → output-available / output-error (every call of a
 * turn gets its result, so a cancelled or interrupted call ends as output-error with the synthetic
 * text the model reads); approvals as the protocol's approval states; progress and steering
 * receipts as data parts; the run's end in the finish chunk's metadata.
 */
export class RunTranslator {
  private turnIndex: number | null = null;
  private readonly blocks = new Map<number, Block>();
  private readonly calls = new Map<string, CallPart>();
  /** Steering messages a turn delivers: the receipt is written once its model call shows them. */
  private steering: { turnIndex: number; count: number } | null = null;
  private unshown: Unshown[] = [];

  constructor(
    private readonly dialect: UIStreamDialect,
    private readonly write: (chunk: AgentchartUIChunk) => void,
  ) {}

  /** The event in chunks; `durable` for a toolApprovalRequested the user answers (with its version). */
  translate(event: AgentEvent, durable?: DurableApproval): void {
    switch (event.type) {
      case 'turnStart':
        return this.startTurn(event);
      case 'beforeModelCall':
        return this.receiptFor(event.turnIndex, event.messages);
      case 'messageStart':
        this.blocks.clear();
        return;
      case 'messageUpdate':
        return this.delta(event);
      case 'messageEnd':
        return this.endMessage(event);
      case 'toolApprovalRequested':
        return this.requestApproval(event, durable);
      case 'toolApprovalResolved':
        return this.resolveApproval(event);
      case 'toolExecutionStart':
        return this.show(event.toolCallId, event.toolName, event.arguments);
      case 'toolExecutionUpdate':
        return this.emit({
          type: 'data-tool-progress',
          id: `progress-${event.toolCallId}`,
          data: { toolCallId: event.toolCallId, toolName: event.toolName, partial: event.partial },
        });
      case 'toolExecutionEnd':
        return this.endCall(event.toolCallId, event.result, event.isError);
      case 'turnEnd':
        return this.endTurn(event);
      case 'agentEnd':
        return this.endRun(event);
      default:
        return;
    }
  }

  /**
   * A call the client shows already, with the approval the user answered: a run taken over after
   * the answer (another handle, another process) continues from here.
   */
  answered(toolCallId: string, approvalId: string): void {
    this.calls.set(toolCallId, { approvalId, refused: false, ended: false, available: true });
  }

  /** The step of the turn in progress is open (a response that ends now leaves it to the next one). */
  get inTurn(): boolean {
    return this.turnIndex !== null;
  }

  private emit(chunk: AgentchartUIChunk): void {
    this.write(chunk);
  }

  private startTurn(event: AgentEventOf<'turnStart'>): void {
    if (this.turnIndex !== null) this.emit({ type: 'finish-step' });
    this.turnIndex = event.turnIndex;
    this.blocks.clear();
    this.emit({ type: 'start-step' });
    if (event.steeringDelivered) this.steering = { turnIndex: event.turnIndex, count: event.steeringDelivered };
  }

  /** The steering messages are the last of the turn's input, so the tail of the context its model call sends. */
  private receiptFor(turnIndex: number, context: readonly Message[]): void {
    const steering = this.steering;
    if (!steering || steering.turnIndex !== turnIndex) return;
    this.steering = null;
    const messages = context
      .slice(-steering.count)
      .flatMap((message) => (message.role === 'user' || message.role === 'custom' ? [message.content] : []));
    this.emit({ type: 'data-steering', id: `steering-${turnIndex}`, data: { turnIndex, messages } });
  }

  private delta(event: AgentEventOf<'messageUpdate'>): void {
    const { delta } = event;
    // The model moved on to a later block: the parts before it are complete.
    this.endBlocks((index) => index < delta.index);
    if (delta.type === 'toolCall') {
      if (!this.calls.has(delta.id)) {
        this.callOf(delta.id);
        this.emit({ type: 'tool-input-start', toolCallId: delta.id, toolName: delta.name });
      }
      if (delta.argumentsDelta !== '') {
        this.emit({ type: 'tool-input-delta', toolCallId: delta.id, inputTextDelta: delta.argumentsDelta });
      }
      return;
    }
    const block = this.open(delta.index, delta.type === 'text' ? 'text' : 'reasoning');
    this.appendTo(block, delta.text);
  }

  private open(index: number, kind: Block['kind']): Block {
    const existing = this.blocks.get(index);
    if (existing) return existing;
    const block: Block = { kind, id: `${this.turnIndex ?? 'x'}-${kind}-${index}`, written: '', ended: false };
    this.blocks.set(index, block);
    this.emit({ type: block.kind === 'text' ? 'text-start' : 'reasoning-start', id: block.id });
    return block;
  }

  private appendTo(block: Block, text: string): void {
    if (text === '' || block.ended) return;
    block.written += text;
    this.emit({ type: block.kind === 'text' ? 'text-delta' : 'reasoning-delta', id: block.id, delta: text });
  }

  /**
   * Closes the message's parts from its final content: text the deltas did not carry (a replayed
   * log keeps no deltas) is written whole, and every tool call's input becomes available.
   */
  private endMessage(event: AgentEventOf<'messageEnd'>): void {
    event.message.content.forEach((block, index) => {
      if (block.type === 'toolCall') {
        this.callOf(block.id).available = true;
        this.emit({ type: 'tool-input-available', toolCallId: block.id, toolName: block.name, input: block.arguments });
        return;
      }
      if (block.text === '' && !this.blocks.has(index)) return;
      const part = this.open(index, block.type === 'text' ? 'text' : 'reasoning');
      if (block.text.startsWith(part.written)) this.appendTo(part, block.text.slice(part.written.length));
      this.endBlocks((open) => open === index);
    });
    this.endBlocks(() => true);
    this.blocks.clear();
  }

  private endBlocks(which: (index: number) => boolean): void {
    for (const [index, block] of this.blocks) {
      if (block.ended || !which(index)) continue;
      block.ended = true;
      this.emit({ type: block.kind === 'text' ? 'text-end' : 'reasoning-end', id: block.id });
    }
  }

  private requestApproval(event: AgentEventOf<'toolApprovalRequested'>, durable?: DurableApproval): void {
    const call = this.callOf(event.toolCallId);
    const { toolCallId } = event;
    if (durable) {
      call.approvalId = approvalIdOf({ toolCallId, version: durable.version, seq: event.seq });
      this.emit({ type: 'tool-approval-request', approvalId: call.approvalId, toolCallId });
      return;
    }
    // An approval handler decides: AI SDK 7 shows it as an automatic approval; 6 has no such state.
    if (!this.dialect.approvalResponses) return;
    call.approvalId = `auto-${toolCallId}`;
    this.emit({ type: 'tool-approval-request', approvalId: call.approvalId, toolCallId, isAutomatic: true });
  }

  private resolveApproval(event: AgentEventOf<'toolApprovalResolved'>): void {
    const call = this.callOf(event.toolCallId);
    // A refusal is written with its result, which says why (a denial's reason, or the withdrawal).
    if (!event.approved) {
      call.refused = true;
      return;
    }
    if (call.approvalId && this.dialect.approvalResponses) {
      this.emit({ type: 'tool-approval-response', approvalId: call.approvalId, approved: true });
    }
  }

  /** A call whose reply this translator did not see (a run taken over mid-turn) gets its part before its result. */
  private show(toolCallId: string, toolName: string, input: Record<string, unknown>): void {
    const call = this.callOf(toolCallId);
    if (call.available) return;
    call.available = true;
    this.emit({ type: 'tool-input-available', toolCallId, toolName, input });
  }

  private endCall(toolCallId: string, result: string, isError: boolean): void {
    const call = this.callOf(toolCallId);
    if (call.ended) return;
    if (!call.available) {
      this.unshown.push({ toolCallId, result, isError });
      return;
    }
    call.ended = true;
    if (call.refused && call.approvalId && isError && result.startsWith(REJECTED_PREFIX)) {
      const reason = result.slice(REJECTED_PREFIX.length);
      if (this.dialect.approvalResponses) {
        this.emit({ type: 'tool-approval-response', approvalId: call.approvalId, approved: false, reason });
      }
      this.emit({ type: 'tool-output-denied', toolCallId });
      return;
    }
    if (isError) this.emit({ type: 'tool-output-error', toolCallId, errorText: result });
    else this.emit({ type: 'tool-output-available', toolCallId, output: result });
  }

  /** Parity on the client too: a result the log published only in turnEnd is written here. */
  private endTurn(event: AgentEventOf<'turnEnd'>): void {
    for (const result of event.toolResults) this.endCall(result.toolCallId, result.content, result.isError);
    // Calls this translator never showed: their parts (from the turn's reply), then their results.
    const unshown = this.unshown;
    this.unshown = [];
    for (const block of event.assistant?.content ?? []) {
      if (block.type === 'toolCall' && unshown.some((result) => result.toolCallId === block.id)) {
        this.show(block.id, block.name, block.arguments);
      }
    }
    for (const { toolCallId, result, isError } of unshown) {
      this.callOf(toolCallId).available = true;
      this.endCall(toolCallId, result, isError);
    }
    this.endBlocks(() => true);
    this.blocks.clear();
    if (this.turnIndex !== null) this.emit({ type: 'finish-step' });
    this.turnIndex = null;
  }

  private endRun(event: AgentEventOf<'agentEnd'>): void {
    if (this.turnIndex !== null) this.emit({ type: 'finish-step' });
    this.turnIndex = null;
    if (event.status === 'aborted') this.emit({ type: 'abort', reason: event.error?.message ?? 'aborted' });
    const metadata: AgentchartMessageMetadata = {
      runId: event.runId,
      status: event.status,
      endReason: event.endReason,
      ...(event.error ? { error: event.error } : {}),
    };
    this.emit({ type: 'finish', finishReason: finishReasonOf(event), messageMetadata: metadata });
  }

  /** A call's state, from the first event that names it. */
  private callOf(toolCallId: string): CallPart {
    let call = this.calls.get(toolCallId);
    if (!call) {
      call = { approvalId: null, refused: false, ended: false, available: false };
      this.calls.set(toolCallId, call);
    }
    return call;
  }
}

/** The AI SDK's finish reason for a run's end (the status itself travels in the metadata). */
function finishReasonOf(event: AgentEventOf<'agentEnd'>): 'stop' | 'error' | 'other' {
  if (event.status === 'completed') return 'stop';
  return event.status === 'failed' ? 'error' : 'other';
}
