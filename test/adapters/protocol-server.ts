import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request as the local provider server received it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** How the server answers one request. */
export type Responder = (res: ServerResponse, req: IncomingMessage) => Promise<void>;

/**
 * A local HTTP server on 127.0.0.1 that answers each request with the next scripted responder, so
 * a test drives a real SDK over a real socket. It records every request and notices when a client
 * closes a response before the server finished it (the proof that an abort cancelled the request).
 */
export class ProtocolServer {
  readonly requests: ReceivedRequest[] = [];
  private readonly script: Responder[] = [];
  private readonly sockets = new Set<Socket>();
  private closedEarlyWaiters: Array<() => void> = [];
  private closedEarlyCount = 0;
  unexpectedRequests = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<ProtocolServer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const instance = new ProtocolServer(server, `http://127.0.0.1:${port}`);
    server.on('connection', (socket) => {
      instance.sockets.add(socket);
      socket.on('close', () => instance.sockets.delete(socket));
    });
    server.on('request', (req, res) => void instance.handle(req, res));
    return instance;
  }

  /** Queues responders; each request consumes the next one. */
  respondWith(...responders: Responder[]): void {
    this.script.push(...responders);
  }

  /** Forgets requests and pending responders between tests. */
  reset(): void {
    this.requests.length = 0;
    this.script.length = 0;
    this.closedEarlyCount = 0;
    this.closedEarlyWaiters = [];
    this.unexpectedRequests = 0;
  }

  /** Resolves once a client has closed a response the server had not finished; rejects after `withinMs`. */
  clientClosedEarly(withinMs = 2000): Promise<void> {
    if (this.closedEarlyCount > 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the client kept the connection open for ${withinMs} ms`)),
        withinMs,
      );
      this.closedEarlyWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  get closedEarly(): number {
    return this.closedEarlyCount;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      // Not JSON: keep the raw text.
    }
    this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
    res.on('close', () => {
      if (res.writableFinished) return;
      this.closedEarlyCount++;
      for (const waiter of this.closedEarlyWaiters.splice(0)) waiter();
    });
    const responder = this.script.shift();
    if (!responder) {
      this.unexpectedRequests++;
      res.writeHead(418, { 'content-type': 'text/plain' }).end('no scripted response for this request');
      return;
    }
    await responder(res, req);
  }
}

function write(res: ServerResponse, chunk: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => res.write(chunk, (error) => (error ? reject(error) : resolve())));
}

export interface SseOptions {
  /** After the chunks: `end` the response (default), `hold` it open until the client leaves, or `cut` the socket. */
  then?: 'end' | 'hold' | 'cut';
  headers?: Record<string, string>;
}

/**
 * An SSE response. Each string is written (and flushed to the socket) separately, so a test can
 * split events anywhere, even mid-line, as TCP may.
 */
export function sse(chunks: ReadonlyArray<string | Uint8Array>, options: SseOptions = {}): Responder {
  return async (res) => {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      ...options.headers,
    });
    res.flushHeaders();
    try {
      for (const chunk of chunks) await write(res, chunk);
    } catch {
      return; // the client left mid-stream
    }
    if (options.then === 'cut') res.socket?.destroy();
    else if (options.then !== 'hold') res.end();
  };
}

/** An HTTP error response with the provider's documented body. */
export function httpError(status: number, body: string, headers: Record<string, string> = {}): Responder {
  return async (res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  };
}

/** Resets the TCP connection (RST) without answering. */
export function connectionReset(): Responder {
  return async (_res, req) => {
    req.socket.resetAndDestroy();
  };
}

/** Never answers: for client-side timeouts. The socket is freed when the client gives up. */
export function noAnswer(): Responder {
  return async () => undefined;
}
