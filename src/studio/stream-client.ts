import type { ServerResponse } from 'node:http';

/** Bytes a page may leave unread before it is considered behind (its later messages are dropped). */
export const CLIENT_BUFFER_LIMIT = 1 << 20;

export interface ClientStats {
  session: string;
  /** Bytes written to the page and not yet taken by it. */
  bufferedBytes: number;
  /** The most bytes it held for the page at any time (measured at each write, so no peak is missed). */
  peakBufferedBytes: number;
  behind: boolean;
  /** Messages dropped while the page was behind. */
  dropped: number;
  /** Fresh snapshots sent after it caught up. */
  resyncs: number;
}

/**
 * One page reading a session's stream (server-sent events). Writes never wait: a page that stops
 * reading (a paused tab) fills its buffer up to `CLIENT_BUFFER_LIMIT`, then its messages are dropped,
 * and once it drains it gets a fresh snapshot instead of the backlog. So a slow page costs the agent
 * neither time nor memory beyond that bound.
 */
export class StreamClient {
  behind = false;
  dropped = 0;
  resyncs = 0;
  closed = false;
  private peakBuffered = 0;
  /** Deltas that arrive while the snapshot this page waits for is being built (sent after it). */
  private waiting: string[] | null = [];
  private waitingBytes = 0;
  /** Deltas were dropped while the snapshot was being built: another snapshot follows it. */
  private stale = false;

  constructor(
    readonly session: string,
    private readonly response: ServerResponse,
    /** Builds and sends a fresh snapshot (the page caught up after falling behind). */
    private readonly resync: (client: StreamClient) => void,
    private readonly limit = CLIENT_BUFFER_LIMIT,
  ) {
    response.on('close', () => {
      this.closed = true;
    });
  }

  /** The snapshot this page starts from (or resumes from after falling behind), then what waited for it. */
  start(hello: string): void {
    if (this.closed) return;
    this.write(hello);
    const waiting = this.waiting ?? [];
    this.waiting = null;
    this.waitingBytes = 0;
    if (this.stale) {
      this.stale = false;
      this.dropped += waiting.length;
      this.behind = true;
      this.caughtUp();
      return;
    }
    for (const delta of waiting) this.send(delta);
  }

  /** A delta: written at once, queued while the snapshot is being built, dropped while the page is behind. */
  send(delta: string): void {
    if (this.closed) return;
    if (this.waiting) {
      this.waitingBytes += delta.length;
      if (this.waitingBytes > this.limit) {
        this.stale = true;
        this.waiting.length = 0;
      } else if (!this.stale) this.waiting.push(delta);
      return;
    }
    if (this.behind || this.response.writableLength > this.limit) {
      this.dropped += 1;
      if (!this.behind) {
        this.behind = true;
        this.response.once('drain', () => this.caughtUp());
      }
      return;
    }
    this.write(delta);
  }

  private write(json: string): void {
    this.response.write(frame(json));
    const buffered = this.response.writableLength;
    if (buffered > this.peakBuffered) this.peakBuffered = buffered;
  }

  private caughtUp(): void {
    if (this.closed) return;
    this.behind = false;
    this.resyncs += 1;
    this.waiting = [];
    this.resync(this);
  }

  /** The stream ends with what went wrong (the page shows it). */
  fail(error: unknown): void {
    this.start(JSON.stringify({ error: error instanceof Error ? error.message : String(error) }));
    this.end();
  }

  end(): void {
    if (!this.closed) this.response.end();
    this.closed = true;
  }

  stats(): ClientStats {
    return {
      session: this.session,
      bufferedBytes: this.closed ? 0 : this.response.writableLength,
      peakBufferedBytes: this.peakBuffered,
      behind: this.behind,
      dropped: this.dropped,
      resyncs: this.resyncs,
    };
  }
}

const frame = (json: string) => `data: ${json}\n\n`;
