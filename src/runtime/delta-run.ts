import type { AgentEvent, MessageDelta } from '../domain/events.js';

export type MessageUpdate = Extract<AgentEvent, { type: 'messageUpdate' }>;

const KINDS = ['text', 'thinking', 'toolCall'] as const;
const KIND_CODE = { text: 0, thinking: 1, toolCall: 2 } as const;

/**
 * Consecutive messageUpdates of one run and turn with consecutive seqs (one message's), kept packed:
 * per update its delta's kind and block index in one small integer and its text or arguments piece
 * (once the message is over, the pieces are one string and their offsets); a tool call's id and name
 * once per block. A run's most frequent event costs the replay buffer a few bytes instead of an event
 * and a delta object; the events are rebuilt, equal field for field and in the same key order, when
 * replayed.
 */
export class DeltaRun {
  /** Updates before it were dropped (the buffer is full): `seq` is the seq of update `from`. */
  private from = 0;
  /** Per update: kind | block index << 2. */
  private codes: number[] = [];
  /** Per update, while the message streams: its piece. */
  private pieces: string[] | null = [];
  /** Once sealed: the pieces joined, and where update i's piece starts (offsets[i]) and ends (offsets[i + 1]). */
  private text = '';
  private offsets: number[] = [];
  /** Per tool call: its block index, id and name (a message has a few: searched, not hashed). */
  private readonly calls: (number | string)[] = [];

  constructor(
    readonly runId: string,
    readonly turnIndex: number,
    private seq: number,
  ) {}

  get size(): number {
    return this.codes.length - this.from;
  }

  /** Takes `update` when it is the next event of this open run, in the same turn, of a block as named before. */
  extend(update: MessageUpdate): boolean {
    const pieces = this.pieces;
    if (
      !pieces ||
      update.seq !== this.seq + this.size ||
      update.turnIndex !== this.turnIndex ||
      update.runId !== this.runId
    )
      return false;
    const delta = update.delta;
    if (delta.type === 'toolCall') {
      const call = this.callAt(delta.index);
      if (call < 0) this.calls.push(delta.index, delta.id, delta.name);
      // A call opened by a stray fragment is named later: its updates start a new run.
      else if (this.calls[call + 1] !== delta.id || this.calls[call + 2] !== delta.name) return false;
      pieces.push(delta.argumentsDelta);
    } else {
      pieces.push(delta.text);
    }
    this.codes.push(KIND_CODE[delta.type] | (delta.index << 2));
    return true;
  }

  /** The `i`-th update still kept, rebuilt with the key order of the one published. */
  event(i: number): MessageUpdate {
    const at = this.from + i;
    const code = this.codes[at] as number;
    const piece = this.pieces
      ? (this.pieces[at] as string)
      : this.text.slice(this.offsets[at] as number, this.offsets[at + 1] as number);
    const type = KINDS[code & 3] as MessageDelta['type'];
    const index = code >> 2;
    let delta: MessageDelta;
    if (type === 'toolCall') {
      const call = this.callAt(index);
      delta = {
        type,
        index,
        id: this.calls[call + 1] as string,
        name: this.calls[call + 2] as string,
        argumentsDelta: piece,
      };
    } else {
      delta = { type, index, text: piece };
    }
    return { type: 'messageUpdate', turnIndex: this.turnIndex, delta, runId: this.runId, seq: this.seq + i };
  }

  private callAt(index: number): number {
    for (let i = 0; i < this.calls.length; i += 3) if (this.calls[i] === index) return i;
    return -1;
  }

  /** The message's updates are over: the pieces become one string, the arrays hold no spare room. */
  seal(): void {
    const pieces = this.pieces;
    if (!pieces) return;
    const offsets = [0];
    let end = 0;
    for (let at = this.from; at < pieces.length; at++) offsets.push((end += (pieces[at] as string).length));
    this.text = pieces.slice(this.from).join('');
    this.offsets = offsets;
    this.codes = this.codes.slice(this.from);
    this.pieces = null;
    this.from = 0;
  }

  dropFirst(): void {
    if (this.pieces) this.pieces[this.from] = '';
    this.from++;
    this.seq++;
    // Amortized O(1), as the buffer's own compaction: a message of a million deltas keeps only what is replayable.
    if (this.from >= 64 && this.from * 2 >= this.codes.length) {
      this.codes = this.codes.slice(this.from);
      if (this.pieces) this.pieces = this.pieces.slice(this.from);
      else this.offsets = this.offsets.slice(this.from);
      this.from = 0;
    }
  }
}

/** Starts a packed run with two updates in a row, or null when they do not follow each other. */
export function deltaRun(first: MessageUpdate, second: MessageUpdate): DeltaRun | null {
  const run = new DeltaRun(first.runId, first.turnIndex, first.seq);
  return run.extend(first) && run.extend(second) ? run : null;
}

/** The update can be rebuilt from its delta: the event has no field beyond those a DeltaRun restores. */
export function rebuildable(event: AgentEvent): event is MessageUpdate {
  return event.type === 'messageUpdate' && typeof event.turnIndex === 'number';
}
