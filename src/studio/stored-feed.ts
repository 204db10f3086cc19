import type { StepSummary } from '../store/step-types.js';
import type { SessionStore } from '../store/types.js';
import type { SessionInfo, SessionView } from './protocol.js';
import type { StreamClient } from './stream-client.js';
import { helloJson, storedEventsForPage, viewOfCheckpoint, wireViewDelta } from './views.js';

/** How often a stored session that no agent of this process runs is read again while a page shows it. */
export const STORED_POLL_MS = 1_000;

/**
 * A stored session no agent of the studio runs (the CLI browsing a store, a session another
 * process writes): its pages get the stored log, then what another process adds, read once a
 * second while a page reads it.
 */
export class StoredFeed {
  private readonly clients = new Set<StreamClient>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private known = { events: 0 };
  private steps: StepSummary[] = [];

  constructor(
    readonly id: string,
    private readonly store: SessionStore,
    private readonly info: () => SessionInfo,
  ) {}

  get readers(): number {
    return this.clients.size;
  }

  join(client: StreamClient): void {
    this.clients.add(client);
    this.sendHello(client, false);
    this.schedule();
  }

  leave(client: StreamClient): void {
    this.clients.delete(client);
  }

  resync(client: StreamClient): void {
    this.sendHello(client, true);
  }

  /** A store that fails to answer (gone, corrupted) ends the page's stream with what went wrong. */
  private sendHello(client: StreamClient, resync: boolean): void {
    void this.hello(resync).then(
      (hello) => client.start(hello),
      (error: unknown) => client.fail(error),
    );
  }

  /** Ends every page's stream (the session became live: the pages read it again from its agent). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const client of this.clients) client.end();
    this.clients.clear();
  }

  private async hello(resync: boolean): Promise<string> {
    const steps = (await this.store.steps?.(this.id)) ?? [];
    const [{ events }, view] = await Promise.all([storedEventsForPage(this.store, this.id, steps), this.view(steps)]);
    this.steps = steps;
    this.known = { events: events.length };
    return helloJson({
      info: this.info(),
      events,
      eventsDropped: 0,
      steps,
      view,
      resync,
    });
  }

  /** The session now: its latest step (with the charts' states), or its checkpoint for a store without steps. */
  private async view(steps: readonly StepSummary[]): Promise<SessionView> {
    const latest = steps.at(-1);
    const step = latest && this.store.loadStep ? await this.store.loadStep(this.id, latest.version) : null;
    if (step) return viewOfCheckpoint(step.checkpoint, step.machines);
    const checkpoint = await this.store.load(this.id);
    if (!checkpoint) throw new Error(`session "${this.id}" does not exist`);
    return viewOfCheckpoint(checkpoint, null);
  }

  private schedule(): void {
    if (this.timer || this.clients.size === 0) return;
    this.timer = setTimeout(() => void this.poll(), STORED_POLL_MS);
    this.timer.unref?.();
  }

  /** What another process added since the last read: new events, the steps, the session now. */
  private async poll(): Promise<void> {
    this.timer = null;
    if (this.clients.size === 0) return;
    try {
      const from = { from: this.known.events };
      const added = this.store.loadEventsJson
        ? (await this.store.loadEventsJson(this.id, from)).length
        : (await this.store.loadEvents(this.id, from)).length;
      if (added > 0) {
        const steps = (await this.store.steps?.(this.id)) ?? this.steps;
        const { events: wired } = await storedEventsForPage(this.store, this.id, steps, this.known.events);
        const view = await this.view(steps);
        this.known = { events: this.known.events + wired.length };
        this.steps = steps;
        const message = `{"delta":{"events":[${wired.join(',')}],${wireViewDelta(view)},"info":${JSON.stringify(this.info())}}}`;
        for (const client of this.clients) client.send(message);
      }
    } catch {
      // The store is busy or gone for a moment: read again at the next tick.
    }
    this.schedule();
  }
}
