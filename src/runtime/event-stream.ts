import { Observable, Subscriber, type Observer, type Operator, type Subscription } from 'rxjs';
import { callIsolated, callIsolated1 } from './isolation.js';
import type { AgentEvent } from '../domain/events.js';
import { DeltaRun, deltaRun, rebuildable } from './delta-run.js';

type Listener = (event: AgentEvent) => void;

/**
 * An Observable whose subscribers are isolated: a subscriber that throws or returns a promise that
 * rejects is reported to `onError` and never breaks the run or the other subscribers (rxjs alone
 * would rethrow it asynchronously and crash the host process). Operators piped after it stay
 * isolated too: an error that reaches a subscriber without an `error` callback is reported.
 */
export class IsolatedObservable<T> extends Observable<T> {
  constructor(
    subscribe: ((subscriber: { next(value: T): void; complete(): void }) => () => void) | undefined,
    private readonly onError: (error: unknown) => void,
  ) {
    super(subscribe && ((subscriber) => subscribe(subscriber)));
  }

  /** Keeps `pipe(...)` results isolated (rxjs builds operator chains through `lift`). */
  override lift<R>(operator?: Operator<T, R>): Observable<R> {
    const observable = new IsolatedObservable<R>(undefined, this.onError);
    observable.source = this;
    observable.operator = operator;
    return observable;
  }

  override subscribe(observerOrNext?: Partial<Observer<T>> | ((value: T) => void) | null): Subscription {
    // rxjs's own subscribers (operator chains) pass through: their errors flow down to ours.
    if (observerOrNext instanceof Subscriber) return super.subscribe(observerOrNext);
    const observer: Partial<Observer<T>> =
      typeof observerOrNext === 'function' ? { next: observerOrNext } : (observerOrNext ?? {});
    const report = this.onError;
    const guard =
      <A extends unknown[]>(fn: ((...args: A) => void) | undefined) =>
      (...args: A) =>
        callIsolated(fn, args, report);
    const onError = observer.error ? guard(observer.error.bind(observer)) : report;
    const next = observer.next?.bind(observer);
    return super.subscribe({
      // Called for every event: one argument, no array of arguments built per call.
      next: next && ((value: T) => callIsolated1(next, value, report)),
      error: onError,
      complete: guard(observer.complete?.bind(observer)),
    });
  }
}

/** Events of a run kept for late subscribers, by default (the `replayBuffer` option). */
export const DEFAULT_REPLAY_BUFFER = 5_000;

type Entry = AgentEvent | DeltaRun;

/**
 * Fan-out of one run's events: replays the run's last `capacity` events to late subscribers, then
 * streams live. Bounded, so a run of thousands of turns or a million progress updates does not keep
 * every event in memory (the store keeps them all).
 */
export class RunEventLog {
  private buffer: Entry[] = [];
  /** Index of the oldest entry still kept in `buffer` (older slots are cleared, compacted now and then). */
  private start = 0;
  /** Events kept (a DeltaRun holds several). */
  private size = 0;
  private readonly listeners = new Set<{ next(event: AgentEvent): void; complete(): void }>();
  private closed = false;

  constructor(
    private readonly onError: (error: unknown) => void,
    private readonly capacity: number = DEFAULT_REPLAY_BUFFER,
  ) {}

  /** The events a late subscriber gets replayed, oldest first. */
  get events(): AgentEvent[] {
    const events: AgentEvent[] = [];
    for (let i = this.start, end = this.buffer.length; i < end; i++) {
      const entry = this.buffer[i] as Entry;
      if (!(entry instanceof DeltaRun)) events.push(entry);
      else for (let j = 0, size = entry.size; j < size; j++) events.push(entry.event(j));
    }
    return events;
  }

  push(event: AgentEvent): void {
    if (this.capacity > 0) {
      this.keep(event);
      if (++this.size > this.capacity) this.dropOldest();
    }
    for (const listener of this.listeners) listener.next(event);
  }

  private keep(event: AgentEvent): void {
    const buffer = this.buffer;
    const last = buffer.length > this.start ? (buffer[buffer.length - 1] as Entry) : null;
    if (last instanceof DeltaRun) {
      if (rebuildable(event) && last.extend(event)) return;
      last.seal();
    } else if (last && rebuildable(event) && rebuildable(last)) {
      // Two updates in a row: from now on the message's updates are kept packed.
      const run = deltaRun(last, event);
      if (run) {
        buffer[buffer.length - 1] = run;
        return;
      }
    }
    buffer.push(event);
  }

  private dropOldest(): void {
    this.size--;
    const oldest = this.buffer[this.start] as Entry;
    if (oldest instanceof DeltaRun && oldest.size > 1) {
      oldest.dropFirst();
      return;
    }
    this.buffer[this.start++] = undefined as unknown as AgentEvent;
    // Amortized O(1): the array is compacted once as many slots are cleared as are kept.
    if (this.start >= 64 && this.start * 2 >= this.buffer.length) {
      this.buffer = this.buffer.slice(this.start);
      this.start = 0;
    }
  }

  close(): void {
    this.closed = true;
    for (const listener of this.listeners) listener.complete();
    this.listeners.clear();
  }

  observable(): Observable<AgentEvent> {
    return new IsolatedObservable<AgentEvent>((subscriber) => {
      // Rebuilt first: what a subscriber's callback publishes meanwhile is not replayed twice.
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
