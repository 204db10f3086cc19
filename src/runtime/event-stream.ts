import { Observable, type Observer, type Subscription } from 'rxjs';
import type { AgentEvent } from '../domain/events.js';

type Listener = (event: AgentEvent) => void;

/**
 * An Observable whose direct subscribers are isolated: a subscriber that throws is reported to
 * `onError` and never breaks the run or the other subscribers (rxjs alone would rethrow it
 * asynchronously and crash the host process). Operators piped after it follow rxjs's rules.
 */
export class IsolatedObservable<T> extends Observable<T> {
  constructor(
    subscribe: (subscriber: { next(value: T): void; complete(): void }) => () => void,
    private readonly onError: (error: unknown) => void,
  ) {
    super((subscriber) => subscribe(subscriber));
  }

  override subscribe(observerOrNext?: Partial<Observer<T>> | ((value: T) => void) | null): Subscription {
    const observer: Partial<Observer<T>> = typeof observerOrNext === 'function' ? { next: observerOrNext } : (observerOrNext ?? {});
    const guard =
      <A extends unknown[]>(fn: ((...args: A) => void) | undefined) =>
      (...args: A) => {
        try {
          fn?.(...args);
        } catch (error) {
          this.onError(error);
        }
      };
    return super.subscribe({ next: guard(observer.next?.bind(observer)), error: guard(observer.error?.bind(observer)), complete: guard(observer.complete?.bind(observer)) });
  }
}

/** Fan-out of one run's events: replays the run so far to late subscribers, then streams live. */
export class RunEventLog {
  readonly events: AgentEvent[] = [];
  private readonly listeners = new Set<{ next(event: AgentEvent): void; complete(): void }>();
  private closed = false;

  constructor(private readonly onError: (error: unknown) => void) {}

  push(event: AgentEvent): void {
    this.events.push(event);
    for (const listener of this.listeners) listener.next(event);
  }

  close(): void {
    this.closed = true;
    for (const listener of this.listeners) listener.complete();
    this.listeners.clear();
  }

  observable(): Observable<AgentEvent> {
    return new IsolatedObservable<AgentEvent>((subscriber) => {
      for (const event of this.events) subscriber.next(event);
      if (this.closed) {
        subscriber.complete();
        return () => {};
      }
      this.listeners.add(subscriber);
      return () => this.listeners.delete(subscriber);
    }, this.onError);
  }
}

/** Every run's events of one agent, live (no replay across runs). */
export class AgentEventFeed {
  private readonly listeners = new Set<Listener>();

  constructor(private readonly onError: (error: unknown) => void) {}

  push(event: AgentEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  observable(): Observable<AgentEvent> {
    return new IsolatedObservable<AgentEvent>((subscriber) => {
      const listener: Listener = (event) => subscriber.next(event);
      this.listeners.add(listener);
      return () => this.listeners.delete(listener);
    }, this.onError);
  }
}
