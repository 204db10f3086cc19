import type { AgentEvent } from '../domain/events.js';

type Update = Extract<AgentEvent, { type: 'messageUpdate' }>;

/**
 * Stream deltas of one content block that follow each other (consecutive seqs), gathered into one
 * messageUpdate for the page: its text is theirs joined, its seq and time the last one's, and
 * `coalesced` says how many it stands for. A fast stream costs the page one event per flush.
 */
export class StreamCoalescer {
  private pieces: string[] = [];
  private last: Update | null = null;
  private lastT = 0;

  /** Takes the delta if it continues the run (else the caller ends the run first). */
  extends(event: Update): boolean {
    const last = this.last;
    if (!last) return false;
    const a = last.delta;
    const b = event.delta;
    return (
      event.seq === last.seq + 1 &&
      event.runId === last.runId &&
      event.turnIndex === last.turnIndex &&
      a.index === b.index &&
      (a.type === 'toolCall' ? b.type === 'toolCall' && a.id === b.id && a.name === b.name : a.type === b.type)
    );
  }

  add(event: Update, t: number): void {
    this.pieces.push(event.delta.type === 'toolCall' ? event.delta.argumentsDelta : event.delta.text);
    this.last = event;
    this.lastT = t;
  }

  /** The run as one event (the delta itself when it is alone), and its time; the run is empty after. */
  take(): { event: AgentEvent; t: number } | null {
    const last = this.last;
    if (!last) return null;
    const count = this.pieces.length;
    const text = this.pieces.join('');
    this.pieces = [];
    this.last = null;
    if (count === 1) return { event: last, t: this.lastT };
    const delta = last.delta.type === 'toolCall' ? { ...last.delta, argumentsDelta: text } : { ...last.delta, text };
    return { event: { ...last, delta, coalesced: count } as Update, t: this.lastT };
  }
}
