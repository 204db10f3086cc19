import { randomUUID } from 'node:crypto';
import type { ObjectContext, RestatePromise } from '@restatedev/restate-sdk';
import type { EffectHost, RecordedAttempt, RecordedToolCall } from '../runtime/effects.js';
import { INTERRUPTED_BY_RESTART } from '../runtime/resume.js';
import type { ToolRunResult } from '../tools/run.js';
import type { InboxItem } from './protocol.js';
import type { RestateSdk } from './sdk.js';

/** Something the run waits for: a journaled step, a durable timer, the inbox. */
interface Waiting {
  promise: RestatePromise<unknown>;
  settle(value: unknown, failure: unknown): void;
}

interface Outcome {
  index: number;
  value: unknown;
  failure: unknown;
}

/** The inbox of the session, as calls of its exclusive handlers. */
export interface InboxCalls {
  take(wake: string): RestatePromise<InboxItem[]>;
}

/**
 * Runs an agent's effects as Restate steps, deterministically. The runtime's actors ask for steps
 * concurrently; the host issues each at once (the journal's order is the order the runtime asks in)
 * and waits for all of them in one `RestatePromise.race`, one await at a time. Before each wait it
 * lets the runtime settle (microtasks, a macrotask, tracked user code), so that every replay issues
 * the same steps in the same order and sees the same winners.
 */
export class RestateHost implements EffectHost {
  private readonly waiting = new Set<Waiting>();
  private readonly userWork = new Set<Promise<unknown>>();
  /** Identifies this attempt of the invocation: a start marker journaled by another attempt means a crash. */
  private readonly attempt = randomUUID();
  private listener: { kind: 'take' | 'wake'; entry: Waiting } | null = null;
  private cancelPending = false;
  private aborted = false;
  /** Receives what the shared handlers sent (set by the prompt handler). */
  onItem: (item: InboxItem) => void = () => {};
  /** Aborts the run (a cancellation without an abort item in the inbox). */
  onCancel: (reason: string | undefined) => void = () => {};

  constructor(
    private readonly sdk: RestateSdk,
    private readonly ctx: ObjectContext,
    private readonly inbox: InboxCalls,
  ) {}

  /** An XState clock whose timers are Restate durable timers (backoff, steering grace). */
  readonly clock = {
    setTimeout: (fn: () => void, timeout: number): Waiting =>
      this.wait(this.ctx.sleep(Math.max(0, timeout)), () => fn()),
    clearTimeout: (id: Waiting): void => {
      this.waiting.delete(id);
    },
  };

  newRunId(): string {
    return `run_${this.ctx.rand.uuidv4()}`;
  }

  random(): number {
    return this.ctx.rand.random();
  }

  modelAttempt(key: string, attempt: () => Promise<RecordedAttempt>): Promise<RecordedAttempt> {
    return this.step(this.ctx.run(key, attempt));
  }

  toolCall(
    call: { id: string; replay: 'never' | 'safe' },
    execute: (update: (partial: unknown) => void) => Promise<ToolRunResult>,
  ): Promise<RecordedToolCall> {
    const run = async (): Promise<RecordedToolCall> => {
      const updates: unknown[] = [];
      const result = await execute((partial) => updates.push(partial));
      return { result, updates };
    };
    if (call.replay === 'safe') return this.step(this.ctx.run(`tool ${call.id}`, run));
    // 'never': a start marker first. A marker journaled by another attempt of this invocation means
    // the tool may have run before the crash: it is not run again.
    const attempt = this.attempt;
    return this.step(this.ctx.run(`start ${call.id}`, () => attempt)).then((marker) =>
      this.step(
        this.ctx.run(`tool ${call.id}`, async () =>
          marker === attempt ? run() : { result: { content: INTERRUPTED_BY_RESTART, isError: true }, updates: [] },
        ),
      ),
    );
  }

  track<T>(work: Promise<T>): Promise<T> {
    this.userWork.add(work);
    const done = () => this.userWork.delete(work);
    work.then(done, done);
    return work;
  }

  /**
   * Starts listening to the inbox: take what is there, else register an awakeable and wait on it.
   * `registered`: an awakeable the inbox already holds (opening it found nothing).
   */
  listen(registered?: { promise: RestatePromise<null> }): void {
    if (registered) {
      this.listener = { kind: 'wake', entry: this.wait(registered.promise, () => this.listen()) };
      return;
    }
    const wake = this.ctx.awakeable<null>();
    const entry = this.wait(this.inbox.take(wake.id), (items, failure) => {
      if (failure) {
        // The take was cancelled with the invocation (Restate cancels calls in flight): ask again.
        this.listen();
        return;
      }
      const taken = items as InboxItem[];
      this.deliver(taken);
      this.afterCancellation();
      if (taken.length > 0) this.listen();
      else this.listener = { kind: 'wake', entry: this.wait(wake.promise, () => this.listen()) };
    });
    this.listener = { kind: 'take', entry };
  }

  /** Drives the run until `until` settles; every wait on Restate happens here, one at a time. */
  async drive<T>(until: Promise<T>): Promise<T> {
    let outcome: { value: T } | null = null;
    void until.then((value) => {
      outcome = { value };
    });
    for (;;) {
      await this.settle();
      if (outcome) return (outcome as { value: T }).value;
      const entries = [...this.waiting];
      if (entries.length === 0) throw new Error('agentchart/restate: the run waits for nothing Restate can complete');
      let winner: Outcome;
      try {
        winner = await this.sdk.RestatePromise.race(
          entries.map((entry, index) => entry.promise.map((value, failure): Outcome => ({ index, value, failure }))),
        );
      } catch (error) {
        if (!(error instanceof this.sdk.CancelledError)) throw error;
        this.cancelled();
        continue;
      }
      const entry = entries[winner.index] as Waiting;
      this.waiting.delete(entry);
      entry.settle(winner.value, winner.failure);
    }
  }

  /** After the run: the items a take in flight brought (the caller closes the inbox next). */
  async finish(): Promise<InboxItem[]> {
    const listener = this.listener;
    this.listener = null;
    this.waiting.clear();
    if (listener?.kind !== 'take') return [];
    try {
      return (await listener.entry.promise) as InboxItem[];
    } catch {
      return [];
    }
  }

  resolveReceipt(awakeableId: string, value: unknown): void {
    this.ctx.resolveAwakeable(awakeableId, value);
  }

  private deliver(items: InboxItem[]): void {
    for (const item of items) {
      if (item.kind === 'abort') this.aborted = true;
      this.onItem(item);
    }
  }

  /** `abort` pushes its reason, then cancels: the reason is taken from the inbox before the run aborts. */
  private cancelled(): void {
    if (this.aborted) return;
    this.cancelPending = true;
    if (this.listener?.kind === 'wake') {
      this.waiting.delete(this.listener.entry);
      this.listen();
    }
  }

  private afterCancellation(): void {
    if (!this.cancelPending) return;
    this.cancelPending = false;
    if (!this.aborted) {
      this.aborted = true;
      this.onCancel(undefined);
    }
  }

  private wait(promise: RestatePromise<unknown>, settle: Waiting['settle']): Waiting {
    const entry: Waiting = { promise, settle };
    this.waiting.add(entry);
    return entry;
  }

  private step<T>(promise: RestatePromise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.wait(promise, (value, failure) => (failure ? reject(failure) : resolve(value as T)));
    });
  }

  /** Lets the runtime run until it waits only for Restate: microtasks, one macrotask, tracked user code. */
  private async settle(): Promise<void> {
    for (;;) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.userWork.size === 0) return;
      await Promise.allSettled([...this.userWork]);
    }
  }
}
