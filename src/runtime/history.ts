import { ContextView } from '../domain/history-view.js';
import type { Message } from '../domain/messages.js';

export { contextViewOf, eventWithView, type ContextView } from '../domain/history-view.js';

/**
 * A session's history, append-only as far as anyone holding a view can tell. Events and model
 * requests share it through views (a prefix of it plus an optional tail) instead of copying it, so
 * a long session costs memory linear in its length. A position covered by a view handed out is
 * never changed in place: truncating or replacing it swaps in a copy (rare: report-mode discards,
 * post-turn replacements), and the views keep the array they were made from.
 */
export class SessionHistory {
  private items: Message[] = [];
  /** Positions [0, viewed) of `items` are covered by a view: change them only in a copy. */
  private viewed = 0;
  /** The lowest position changed since the store last took the changes. */
  private changedFrom = 0;

  get messages(): Message[] {
    return this.items;
  }

  get length(): number {
    return this.items.length;
  }

  append(message: Message): void {
    this.items.push(message);
  }

  truncate(length: number): void {
    if (length >= this.items.length) return;
    if (length < this.viewed) this.copyOnWrite();
    this.items.length = length;
    this.changedFrom = Math.min(this.changedFrom, length);
  }

  /** Replaces the message at `index` (a post-turn replacement of the assistant message). */
  replace(index: number, message: Message): void {
    if (index < 0 || index >= this.items.length) return;
    if (index < this.viewed) this.copyOnWrite();
    this.items[index] = message;
    this.changedFrom = Math.min(this.changedFrom, index);
  }

  /** Loads a stored history; `stored` says the store already has all of it. */
  reset(messages: readonly Message[], stored: boolean): void {
    this.items = [...messages];
    this.viewed = 0;
    this.changedFrom = stored ? this.items.length : 0;
  }

  /** The history as `prefix` of its positions plus `tail` (default: all of it, no tail). */
  view(prefix = this.items.length, tail: readonly Message[] = []): ContextView {
    this.viewed = Math.max(this.viewed, prefix);
    return new ContextView(this.items, prefix, tail);
  }

  /**
   * A view of `messages` (a context sent to the model) sharing the longest prefix it has in common
   * with the history: a transform that keeps the history's start costs only its changed tail.
   */
  viewOf(messages: readonly Message[]): ContextView {
    const limit = Math.min(messages.length, this.items.length);
    let prefix = 0;
    while (prefix < limit && messages[prefix] === this.items[prefix]) prefix++;
    return this.view(prefix, prefix === messages.length ? [] : messages.slice(prefix));
  }

  /** What changed since the last call: positions from `from` on are replaced by `messages`. */
  takeChanges(): { from: number; messages: Message[] } {
    const from = Math.min(this.changedFrom, this.items.length);
    this.changedFrom = this.items.length;
    return { from, messages: this.items.slice(from) };
  }

  private copyOnWrite(): void {
    this.items = this.items.slice();
    this.viewed = 0;
  }
}
