import type { Message } from '../domain/messages.js';

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

/**
 * `items[0, prefix)` followed by `tail`, materialized on access as a frozen array. The array is
 * kept only while someone holds it (a WeakRef), so an event log of a long session does not hold a
 * copy of the history per model call.
 */
export class ContextView {
  private cached: WeakRef<readonly Message[]> | null = null;

  constructor(
    private readonly items: readonly Message[],
    readonly prefix: number,
    readonly tail: readonly Message[],
  ) {}

  get length(): number {
    return this.prefix + this.tail.length;
  }

  /** Whether the view was made from `items` (then its prefix is still `items[0, prefix)`). */
  isOver(items: readonly Message[]): boolean {
    return this.items === items;
  }

  messages(): readonly Message[] {
    const cached = this.cached?.deref();
    if (cached) return cached;
    const head = this.items.slice(0, this.prefix);
    const messages = Object.freeze(this.tail.length === 0 ? head : head.concat(this.tail));
    this.cached = new WeakRef(messages);
    return messages;
  }
}

const viewsOfEvents = new WeakMap<object, ContextView>();

/**
 * Turns `event.messages` into an enumerable getter over `view`, in place (the key keeps its
 * position): JSON.stringify, spreading and iteration see the same plain array as before.
 */
export function attachContextView<E extends { messages: readonly Message[] }>(event: E, view: ContextView): E {
  Object.defineProperty(event, 'messages', { get: () => view.messages(), enumerable: true, configurable: true });
  viewsOfEvents.set(event, view);
  return event;
}

/** The view behind an event's `messages`, if it has one (the stores write the view, not the copy). */
export function contextViewOf(event: object): ContextView | undefined {
  return viewsOfEvents.get(event);
}
