import type { McpClient, McpElicitParams, McpElicitResult, McpSdk } from './sdk.js';
import type { McpHttpServer, McpServerConfig, McpStdioServer } from './types.js';

/** Why a link was lost. */
export interface LinkLoss {
  reason: string;
  /** A message from the server exceeded the stdio read limit (this many bytes). */
  readLimitBytes?: number;
}

/** One connected client; a reconnection makes a new one (the SDK's clients are single-use). */
export interface Link {
  readonly client: McpClient;
  readonly generation: number;
  readonly stderr: NodeJS.ReadableStream | null;
  /** Set once its connection closed or was found dead (expired session, broken stream). */
  lost: boolean;
  /**
   * Calls `listener` once when the link is lost (a call in flight fails then, not when the SDK
   * finally gives up on it); returns the unsubscribe.
   */
  onLost(listener: (loss: LinkLoss) => void): () => void;
}

type ConnectionState =
  | { kind: 'connected'; link: Link }
  | { kind: 'reconnecting'; ready: Promise<Link> }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'closed' };

export interface ConnectionSettings {
  connectMs: number;
  /** The longest message read from a stdio server; a longer one breaks the stream. */
  readLimitBytes: number;
  reconnect: { maxAttempts: number; baseDelayMs: number; maxDelayMs: number };
}

export interface ConnectionHooks {
  /** The server said its tool list changed (on the live link). */
  onToolListChanged(link: Link): void;
  /** A new link replaced a lost one. */
  onReconnected(link: Link): void;
  elicit(params: McpElicitParams, signal: AbortSignal): Promise<McpElicitResult>;
}

const CLIENT_INFO = { name: 'agentchart', version: '0.1.0' };

/**
 * The connection to one MCP server: connects, notices when it is lost (a stdio process that
 * closed, an HTTP session the server no longer knows) and reconnects with exponential backoff.
 * Calls ask for `link()`, which waits through a reconnection.
 */
export class McpConnection {
  private state: ConnectionState = { kind: 'unavailable', reason: 'not connected yet' };
  private generation = 0;
  private readonly closing = new AbortController();
  /** The SDK closes of lost links still under way (a stdio server is given time to exit, then signalled). */
  private readonly ending = new Set<Promise<void>>();
  /** Each live link's loss listeners. */
  private readonly listeners = new WeakMap<Link, Set<(loss: LinkLoss) => void>>();

  constructor(
    private readonly sdk: McpSdk,
    private readonly server: McpServerConfig,
    private readonly settings: ConnectionSettings,
    private readonly hooks: ConnectionHooks,
  ) {}

  /** The first connection: its failure is the caller's (no retry). */
  async open(): Promise<Link> {
    const link = await this.connectOnce();
    this.state = { kind: 'connected', link };
    return link;
  }

  /** Read through a getter: the state changes across the awaits of a reconnection. */
  private get closed(): boolean {
    return this.state.kind === 'closed';
  }

  get current(): Link | null {
    return this.state.kind === 'connected' ? this.state.link : null;
  }

  /** The live link, after a reconnection if one is under way or needed. */
  link(): Promise<Link> {
    switch (this.state.kind) {
      case 'connected':
        return Promise.resolve(this.state.link);
      case 'reconnecting':
        return this.state.ready;
      case 'unavailable':
        return this.reconnect(this.state.reason);
      case 'closed':
        return Promise.reject(new Error('the MCP toolset was closed'));
    }
  }

  /** Marks a link dead; the first report about the live link starts the reconnection. */
  lost(link: Link, loss: LinkLoss | string): void {
    if (link.lost) return;
    const known = typeof loss === 'string' ? { reason: loss } : loss;
    link.lost = true;
    const listeners = this.listeners.get(link);
    this.listeners.delete(link);
    for (const listener of listeners ?? []) listener(known);
    if (this.state.kind === 'connected' && this.state.link === link) void this.reconnect(known.reason).catch(() => {});
    // An HTTP link keeps a GET stream open; a stdio server may still be running (a closed toolset).
    const ended: Promise<void> = link.client
      .close()
      .catch(() => {})
      .finally(() => this.ending.delete(ended));
    this.ending.add(ended);
  }

  /** Resolves once every server this toolset started has ended (a stdio server: exited, or killed). */
  async close(): Promise<void> {
    const link = this.current;
    this.state = { kind: 'closed' };
    this.closing.abort();
    if (link) this.lost(link, 'the MCP toolset was closed');
    // A second SDK close() returns at once: wait for the first, which gives a stdio server 2 s to exit and then
    // signals it — an app calling process.exit() after close() would otherwise orphan a server that stays.
    await Promise.all(this.ending);
  }

  private reconnect(reason: string): Promise<Link> {
    const { maxAttempts, baseDelayMs, maxDelayMs } = this.settings.reconnect;
    const ready = (async () => {
      let lastError = reason;
      for (let attempt = 1; attempt <= maxAttempts; attempt++) {
        // The first attempt is immediate (a crashed stdio server restarts at once); then backoff.
        if (attempt > 1) await sleep(Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 2)), this.closing.signal);
        if (this.closed) break;
        try {
          const link = await this.connectOnce();
          if (this.closed) {
            await link.client.close().catch(() => {});
            break;
          }
          this.state = { kind: 'connected', link };
          this.hooks.onReconnected(link);
          return link;
        } catch (error) {
          lastError = error instanceof Error ? error.message : String(error);
        }
      }
      if (this.closed) throw new Error('the MCP toolset was closed');
      const why = `the MCP server could not be reached after ${maxAttempts} attempts (${lastError})`;
      this.state = { kind: 'unavailable', reason: why };
      throw new Error(why);
    })();
    this.state = { kind: 'reconnecting', ready };
    return ready;
  }

  private async connectOnce(): Promise<Link> {
    const { sdk } = this;
    const client = new sdk.Client(CLIENT_INFO, { capabilities: { elicitation: {} } });
    const transport = isStdio(this.server) ? this.stdioTransport(this.server) : this.httpTransport(this.server);
    const stderr = 'stderr' in transport ? (transport.stderr as NodeJS.ReadableStream | null) : null;
    const listeners = new Set<(loss: LinkLoss) => void>();
    const link: Link = {
      client,
      generation: ++this.generation,
      stderr,
      lost: false,
      onLost: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    this.listeners.set(link, listeners);
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => {
      if (this.current === link) this.hooks.onToolListChanged(link);
    });
    client.setRequestHandler(sdk.ElicitRequestSchema, (request, extra) =>
      this.hooks.elicit(request.params, extra.signal),
    );
    client.onclose = () => this.lost(link, 'the connection closed');
    // A broken stdio stream is lost now: the SDK notices only when the process exits, seconds later.
    // Other transport noise (an HTTP GET stream retrying, one unparsable line) is not a call's failure.
    const stdio = isStdio(this.server);
    client.onerror = (error) => {
      const loss = stdio ? brokenStream(error) : null;
      if (loss) this.lost(link, loss);
    };
    try {
      await client.connect(transport, { timeout: this.settings.connectMs });
    } catch (error) {
      this.lost(link, 'the connection failed');
      await client.close().catch(() => {});
      throw error;
    }
    deliverResponsesAfterNotifications(transport);
    return link;
  }

  private stdioTransport(server: McpStdioServer) {
    return new this.sdk.StdioClientTransport({
      command: server.command,
      ...(server.args ? { args: server.args } : {}),
      ...(server.env ? { env: server.env } : {}),
      ...(server.cwd ? { cwd: server.cwd } : {}),
      stderr: server.stderr ?? 'inherit',
      maxBufferSize: this.settings.readLimitBytes,
    });
  }

  private httpTransport(server: McpHttpServer) {
    return new this.sdk.StreamableHTTPClientTransport(new URL(server.url), {
      ...(server.headers ? { requestInit: { headers: server.headers } } : {}),
    });
  }
}

const BROKEN_PIPE_CODES = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END']);

/** A stdio transport error after which the stream cannot be used: the read limit passed, a broken pipe. */
function brokenStream(error: Error): LinkLoss | null {
  const overflow = /ReadBuffer exceeded maximum size of (\d+)/.exec(error.message);
  if (overflow) {
    const readLimitBytes = Number(overflow[1]);
    return { reason: `a message from the server passed the read limit of ${readLimitBytes} bytes`, readLimitBytes };
  }
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && BROKEN_PIPE_CODES.has(code))
    return { reason: `the stream to the server broke (${code})` };
  return null;
}

export function isStdio(server: McpServerConfig): server is McpStdioServer {
  return typeof (server as McpStdioServer).command === 'string';
}

/**
 * The SDK handles a notification a microtask late but a response at once, and forgets a call's
 * progress handler with its response: a progress notification read in the same chunk as the
 * response would be dropped. Responses therefore wait one macrotask, after the notifications
 * read before them.
 */
function deliverResponsesAfterNotifications(transport: { onmessage?: (message: never, extra?: never) => void }): void {
  const deliver = transport.onmessage;
  if (!deliver) return;
  const later: (run: () => void) => void =
    typeof setImmediate === 'function' ? (run) => setImmediate(run) : (run) => setTimeout(run, 0);
  transport.onmessage = (message, extra) => {
    const isResponse = typeof message === 'object' && message !== null && 'id' in message && !('method' in message);
    if (isResponse) later(() => deliver(message, extra));
    else deliver(message, extra);
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    // A toolset waiting to reconnect must not keep the process alive.
    (timer as { unref?: () => void }).unref?.();
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
