import type { Subscription } from 'rxjs';
import type { AgentEvent } from '../domain/events.js';
import type { Message } from '../domain/messages.js';
import type { Agent } from '../runtime/agent.js';
import type { AgentTap } from '../runtime/agent-tap.js';
import type { SessionInfo, SessionView } from './protocol.js';
import type { StreamClient } from './stream-client.js';
import type { StepSummary } from '../store/step-types.js';
import { helloJson, storedEventsForPage } from './views.js';
import { StreamCoalescer } from './coalesce.js';
import { eventBatches, wireEvent, wireJson, wireMessages, wireValue, type Wired } from './wire.js';

/** Events kept for a page that opens late (an agent with a store: the store has them all). */
export const LIVE_EVENT_BUFFER = 5_000;
/** A snapshot of an agent without a store carries its latest events up to about this many bytes. */
export const SNAPSHOT_EVENT_BYTES = 4 << 20;
/** A page gets what changed at most this often: a fast run's many steps cost one message. */
export const FLUSH_MS = 40;

interface Received {
  event: AgentEvent;
  t: number;
}

/**
 * An agent attached to the studio, as its pages see it. The agent's side is two stores per event
 * (into a ring, no allocation): everything else — reading the states, the counters, the history's
 * changes, serializing — happens on a timer, at most every `FLUSH_MS`, and only while a page
 * reads. A run that outpaces the pages costs them one message per flush, never the run a wait.
 */
export class LiveSession {
  /** The latest events and when each came, a ring of `LIVE_EVENT_BUFFER`: the agent's side allocates nothing per event. */
  private readonly ringEvents: (AgentEvent | undefined)[] = new Array<AgentEvent | undefined>(LIVE_EVENT_BUFFER);
  private readonly ringTimes = new Float64Array(LIVE_EVENT_BUFFER);
  /** Events received since attaching; those before `total - LIVE_EVENT_BUFFER` are gone from the ring. */
  private total = 0;
  /** Events the pages were sent (or, before a page joined, skipped): the next flush sends from here. */
  private flushed = 0;
  /** Events the ring let go of before a flush sent them, as the page gets them (only while pages read, rarely). */
  private spilled: Wired = { values: [], times: [] };
  private spilledTurnEnd = false;
  /** Events before this index may be in a snapshot a page got: their deltas are sent as they are. */
  private helloIndex = 0;
  private readonly clients = new Set<StreamClient>();
  private readonly subscription: Subscription;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** The time the flushes and their socket writes took so far on the agent's thread (ms; both synchronous). */
  flushMs = 0;
  /** What the pages were last sent: history as references, the rest as JSON. */
  private readonly sentHistory: Message[] = [];
  private stableLength = 0;
  private sent = { counters: '', machines: '', approvals: '', running: false };
  private sentQueues: { steering: readonly Message[]; followUp: readonly Message[] } = { steering: [], followUp: [] };

  constructor(
    readonly id: string,
    readonly label: string,
    readonly agent: Agent,
    readonly tap: AgentTap,
    /** The studio opened this agent (`agentFor`): it closes it when it stops. */
    readonly owned: boolean,
  ) {
    this.subscription = agent.events.subscribe((event) => this.receive(event));
    this.markSent(this.now());
  }

  private receive(event: AgentEvent): void {
    if (this.clients.size > 0 && this.total - this.flushed >= LIVE_EVENT_BUFFER) this.spill();
    const slot = this.total++ % LIVE_EVENT_BUFFER;
    this.ringEvents[slot] = event;
    this.ringTimes[slot] = Date.now();
    if (this.clients.size > 0 && this.timer === null) this.schedule();
  }

  /** The oldest event not yet sent is about to be overwritten (a run outpaced the flushes): it waits serialized. */
  private spill(): void {
    const slot = this.flushed++ % LIVE_EVENT_BUFFER;
    const event = this.ringEvents[slot] as AgentEvent;
    if (event.type === 'turnEnd' || event.type === 'agentEnd') this.spilledTurnEnd = true;
    this.spilled.values.push(wireValue(event));
    this.spilled.times.push(this.ringTimes[slot] as number);
  }

  /** The buffered events from absolute index `from` (clamped to what the ring still holds). */
  private buffered(from: number): Received[] {
    const items: Received[] = [];
    for (let index = Math.max(from, this.total - LIVE_EVENT_BUFFER); index < this.total; index++) {
      const slot = index % LIVE_EVENT_BUFFER;
      items.push({ event: this.ringEvents[slot] as AgentEvent, t: this.ringTimes[slot] as number });
    }
    return items;
  }

  info(): SessionInfo {
    return {
      id: this.id,
      label: this.label,
      live: true,
      stored: this.tap.store !== null,
      running: this.tap.running,
      controllable: true,
      version: null,
      updatedAt: this.total > 0 ? (this.ringTimes[(this.total - 1) % LIVE_EVENT_BUFFER] as number) : null,
    };
  }

  /** A page starts reading: it gets a snapshot, then every change. */
  join(client: StreamClient): void {
    // No page read the changes since the last one left: the new page's snapshot is the baseline.
    if (this.clients.size === 0) {
      this.markSent(this.now());
      this.flushed = this.total;
      this.spilled = { values: [], times: [] };
    }
    this.clients.add(client);
    void this.sendHello(client, false);
  }

  leave(client: StreamClient): void {
    this.clients.delete(client);
  }

  /** The page fell behind and caught up: a fresh snapshot replaces what it had. */
  resync(client: StreamClient): void {
    void this.sendHello(client, true);
  }

  private async sendHello(client: StreamClient, resync: boolean): Promise<void> {
    try {
      client.start(await this.hello(resync));
      this.schedule();
    } catch (error) {
      client.fail(error);
    }
  }

  /** Every page is told what went wrong, and its stream ends (it reconnects from a fresh snapshot). */
  private failClients(error: unknown): void {
    for (const client of this.clients) client.fail(error);
    this.clients.clear();
  }

  /** The snapshot: the store's log (if any) and the live events it lacks, the session now. */
  private async hello(resync: boolean): Promise<string> {
    const { store, sessionId } = this.tap;
    const live = this.buffered(0);
    let events: string[];
    let steps: StepSummary[] | null = null;
    let dropped = this.total - live.length;
    if (store && sessionId) {
      const summaries = (await store.steps?.(sessionId)) ?? [];
      const stored = await storedEventsForPage(store, sessionId, summaries);
      // The store has every event before a step's end; what it lacks yet (a reply still streaming) is
      // at the end of the live buffer, after the last stored event.
      let lastStored = live.length - 1;
      while (lastStored >= 0 && keyOf((live[lastStored] as Received).event) !== stored.lastKey) lastStored--;
      const unstored = lastStored >= 0 || stored.lastKey === null ? live.slice(lastStored + 1) : [];
      events = [...stored.events, ...unstored.map((item) => wireEvent(item.event, item.t))];
      steps = summaries;
      dropped = 0;
    } else {
      // The latest events up to a budget: a snapshot of an agent without a store stays small.
      events = [];
      let bytes = 0;
      for (let index = live.length - 1; index >= 0 && bytes < SNAPSHOT_EVENT_BYTES; index--) {
        const item = live[index] as Received;
        const json = wireEvent(item.event, item.t);
        bytes += json.length;
        events.push(json);
      }
      events.reverse();
      dropped += live.length - events.length;
    }
    this.helloIndex = this.total;
    // The other pages' deltas keep their baseline: a delta repeats what a snapshot has, harmlessly
    // (history by position, the rest whole, events deduplicated by the page).
    return helloJson({ info: this.info(), events, eventsDropped: dropped, steps, view: this.now(), resync });
  }

  private now(): SessionView {
    const queues = this.tap.queues();
    return {
      history: this.agent.messages as Message[],
      counters: this.agent.counters,
      machines: this.tap.machines(),
      approvals: this.agent.pendingApprovals(),
      queues: { steering: [...queues.steering], followUp: [...queues.followUp] },
      running: this.tap.running,
    };
  }

  /** Changes are measured from what the pages were last sent. */
  private markSent(now: SessionView): void {
    this.sentHistory.length = 0;
    for (const message of now.history) this.sentHistory.push(message);
    this.stableLength = now.history.length;
    this.sent = {
      counters: JSON.stringify(now.counters),
      machines: JSON.stringify(now.machines),
      approvals: JSON.stringify(now.approvals),
      running: now.running,
    };
    this.sentQueues = now.queues;
  }

  private schedule(): void {
    if (this.timer || this.clients.size === 0) return;
    this.timer = setTimeout(() => this.timedFlush(), FLUSH_MS);
    this.timer.unref?.();
  }

  /**
   * A flush, timed: the thread's CPU clock may count in 4 ms ticks, far coarser than a flush. The
   * socket writes come on the next tick (a response corks its writes until then): they count too.
   */
  private timedFlush(): void {
    const start = performance.now();
    try {
      this.flush();
    } catch (error) {
      // Nothing the studio sends may take the agent's process down (this runs on a timer): its pages are told.
      this.failClients(error);
    } finally {
      process.nextTick(() => (this.flushMs += performance.now() - start));
    }
  }

  /** Sends what changed since the last message; keeps polling while a run is in progress (states change between events). */
  private flush(): void {
    this.timer = null;
    if (this.clients.size === 0) return;
    if (this.allBehind()) return;
    const wired = this.spilled;
    this.spilled = { values: [], times: [] };
    let turnEnded = this.spilledTurnEnd;
    this.spilledTurnEnd = false;
    const deltas = new StreamCoalescer();
    const endRun = () => {
      const run = deltas.take();
      if (!run) return;
      wired.values.push(wireValue(run.event));
      wired.times.push(run.t);
    };
    for (let index = this.flushed; index < this.total; index++) {
      const slot = index % LIVE_EVENT_BUFFER;
      const event = this.ringEvents[slot] as AgentEvent;
      const t = this.ringTimes[slot] as number;
      // Deltas a snapshot may hold one by one go one by one (the page deduplicates them by seq).
      if (event.type === 'messageUpdate' && index >= this.helloIndex) {
        if (!deltas.extends(event)) endRun();
        deltas.add(event, t);
        continue;
      }
      endRun();
      if (event.type === 'turnEnd' || event.type === 'agentEnd') turnEnded = true;
      wired.values.push(wireValue(event));
      wired.times.push(t);
    }
    endRun();
    this.flushed = this.total;
    const parts: string[] = [];
    const batches = eventBatches(wired);
    const last = batches.pop();
    for (const batch of batches) {
      const message = `{"delta":{${batch}}}`;
      for (const client of this.clients) client.send(message);
    }
    if (last) parts.push(last);
    const history = this.historyChange(turnEnded);
    if (history) parts.push(`"history":{"from":${history.from},"messages":${wireMessages(history.messages)}}`);
    const counters = JSON.stringify(this.agent.counters);
    if (counters !== this.sent.counters) parts.push(`"counters":${(this.sent.counters = counters)}`);
    const machines = JSON.stringify(this.tap.machines());
    if (machines !== this.sent.machines) parts.push(`"machines":${(this.sent.machines = machines)}`);
    const approvals = wireJson(this.agent.pendingApprovals());
    if (approvals !== this.sent.approvals) parts.push(`"approvals":${(this.sent.approvals = approvals)}`);
    const queues = this.tap.queues();
    if (
      !sameMessages(queues.steering, this.sentQueues.steering) ||
      !sameMessages(queues.followUp, this.sentQueues.followUp)
    ) {
      this.sentQueues = { steering: [...queues.steering], followUp: [...queues.followUp] };
      parts.push(`"queues":{"steering":${wireMessages(queues.steering)},"followUp":${wireMessages(queues.followUp)}}`);
    }
    const running = this.tap.running;
    if (running !== this.sent.running) {
      this.sent.running = running;
      parts.push(`"running":${running}`, `"info":${JSON.stringify(this.info())}`);
    }
    if (parts.length > 0) {
      const message = `{"delta":{${parts.join(',')}}}`;
      for (const client of this.clients) client.send(message);
    }
    if (running) this.schedule();
  }

  /**
   * Every page fell behind (a paused tab): what they would drop is not even built (counted as dropped
   * for each), and each resyncs from a snapshot once it drains. A paused page costs the agent nothing.
   */
  private allBehind(): boolean {
    for (const client of this.clients) if (!client.behind) return false;
    this.flushed = this.total;
    this.spilled = { values: [], times: [] };
    this.spilledTurnEnd = false;
    for (const client of this.clients) client.dropped += 1;
    if (this.tap.running) this.schedule();
    return true;
  }

  /**
   * The history's change since the last message, from references: usually an append found from the
   * end. After a turn ended, the whole turn is compared (a post-turn policy may have replaced its reply).
   */
  private historyChange(turnEnded: boolean): { from: number; messages: Message[] } | null {
    const messages = this.agent.messages;
    const sent = this.sentHistory;
    let from = Math.min(messages.length, sent.length);
    while (from > 0 && messages[from - 1] !== sent[from - 1]) from--;
    if (turnEnded) {
      let first = Math.min(this.stableLength, from);
      while (first < from && messages[first] === sent[first]) first++;
      from = first;
      this.stableLength = messages.length;
    }
    if (from === messages.length && from === sent.length) return null;
    const changed = messages.slice(from);
    sent.length = from;
    for (const message of changed) sent.push(message);
    return { from, messages: changed };
  }

  stop(): void {
    this.subscription.unsubscribe();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const client of this.clients) client.end();
    this.clients.clear();
  }
}

const keyOf = (event: AgentEvent) => `${event.runId}:${event.seq}`;

function sameMessages(a: readonly Message[], b: readonly Message[]): boolean {
  return a.length === b.length && a.every((message, index) => message === b[index]);
}
