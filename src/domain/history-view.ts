import type { Message } from './messages.js';

/**
 * `items[0, prefix)` followed by `tail`, materialized on access as a frozen array. The array is
 * kept only while someone holds it (a WeakRef), so an event log of a long session does not hold a
 * copy of the history per model call.
 */
export class ContextView {
  private cached: WeakRef<readonly Message[]> | null = null;

  constructor(
    readonly items: readonly Message[],
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

/** One getter for every event (a closure per event would cost ~0.5 KB each): the view is found by the event. */
function messagesOfEvent(this: object): readonly Message[] {
  return viewsOfEvents.get(this)?.messages() ?? [];
}
const MESSAGES_FROM_VIEW: PropertyDescriptor = { get: messagesOfEvent, enumerable: true, configurable: true };

/**
 * An event with `fields` in their order, its `messages` an enumerable getter over `view`:
 * JSON.stringify, spreading, structuredClone and iteration see the same plain array as a copy.
 */
export function eventWithView<E>(fields: Record<string, unknown>, view: ContextView): E {
  const event: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    if (key === 'messages') Object.defineProperty(event, 'messages', MESSAGES_FROM_VIEW);
    else event[key] = fields[key];
  }
  viewsOfEvents.set(event, view);
  return event as E;
}

/** The view behind an event's `messages`, if it has one (the stores write the view, not the copy). */
export function contextViewOf(event: object): ContextView | undefined {
  return viewsOfEvents.get(event);
}
