import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * The guard every local HTTP/WebSocket endpoint the library opens goes through (the inspector relay,
 * the studio). A web page the developer has open elsewhere must not read a session nor drive it:
 *
 * - it listens on 127.0.0.1 only;
 * - a random token (256 bits, new at every start) is required on every request and every socket
 *   upgrade, compared in constant time. It travels in the URL the process prints (`?token=`); the
 *   page's own scripts read it from `location.search` and pass it on: in the query of their
 *   WebSocket / EventSource URLs, or as the `x-agentchart-token` header of their fetches;
 * - `Host` must name the loopback address (or `localhost`) with this server's port (DNS rebinding);
 * - an `Origin` header, when present, must be this server's own origin: `Origin: null` (a sandboxed
 *   frame, a `data:` page) and every other origin are refused. Browsers always send `Origin` on a
 *   WebSocket upgrade; a client without one is a local process, which still needs the token;
 * - no CORS header is ever sent, so a foreign page can neither preflight nor read a response;
 * - a refusal is the status (403 for Host/Origin, 401 for the token) with an empty body.
 *
 * Use:
 *   const endpoint = createLocalEndpoint({ port });
 *   const server = createServer(endpoint.guard((request, response) => { ... }));
 *   server.on('upgrade', endpoint.guardUpgrade((request, socket, head) => wss.handleUpgrade(...)));
 *   await endpoint.listen(server);
 *   console.log(endpoint.url('/'));   // http://127.0.0.1:<port>/?token=…
 */

export interface LocalEndpointOptions {
  /** 0 (default): any free port. */
  port?: number;
}

export type EndpointVerdict =
  { allowed: true } | { allowed: false; status: 401 | 403; reason: 'host' | 'origin' | 'token' };

export interface LocalEndpoint {
  /** The per-start secret (hex). Put it in what the page's scripts send back; never log it elsewhere. */
  readonly token: string;
  /** The bound port; throws before `listen` resolves. */
  readonly port: number;
  /** `http://127.0.0.1:<port>`: the only origin whose pages are served and whose sockets are accepted. */
  readonly origin: string;
  /** An http URL on this endpoint with the token in its query (`path` may carry a query of its own). */
  url(path?: string): string;
  /** The same as a ws URL, for a WebSocket client. */
  socketUrl(path?: string): string;
  /** The verdict on a plain HTTP request. */
  checkRequest(request: IncomingMessage): EndpointVerdict;
  /** The verdict on a WebSocket upgrade request (the same rules: Host, Origin, token). */
  checkUpgrade(request: IncomingMessage): EndpointVerdict;
  /** Wraps a request listener: refuses first, then calls it with defensive headers already set. */
  guard(listener: RequestListener): RequestListener;
  /** Wraps an `upgrade` listener: a refused upgrade gets its status and the socket is closed. */
  guardUpgrade(
    listener: (request: IncomingMessage, socket: Duplex, head: Buffer) => void,
  ): (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Listens on 127.0.0.1 (at `options.port`, else any free port); rejects with the listen error. */
  listen(server: Server): Promise<void>;
}

/** The header a page's fetches carry the token in (a query parameter `token` works as well). */
export const TOKEN_HEADER = 'x-agentchart-token';
export const LOOPBACK = '127.0.0.1';

/** Headers on every answer: no sniffing, no framing by another page, no token in a Referer, no caching. */
const DEFENSIVE_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': "frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

const STATUS_TEXT = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' } as const;

export function createLocalEndpoint(options: LocalEndpointOptions = {}): LocalEndpoint {
  const token = randomBytes(32).toString('hex');
  const tokenDigest = digest(token);
  let boundPort: number | null = null;

  const port = () => {
    if (boundPort === null) throw new Error('The local endpoint is not listening yet.');
    return boundPort;
  };
  const withToken = (scheme: 'http' | 'ws', path: string) => {
    const url = new URL(path, `${scheme}://${LOOPBACK}:${port()}`);
    url.searchParams.set('token', token);
    return url.href;
  };

  const check = (request: IncomingMessage): EndpointVerdict => {
    if (boundPort === null) return { allowed: false, status: 403, reason: 'host' };
    const hosts = [`${LOOPBACK}:${boundPort}`, `localhost:${boundPort}`];
    if (!hosts.includes(request.headers.host ?? '')) return { allowed: false, status: 403, reason: 'host' };
    const origin = request.headers.origin;
    if (origin !== undefined && !hosts.some((host) => origin === `http://${host}`))
      return { allowed: false, status: 403, reason: 'origin' };
    if (!tokenMatches(presentedToken(request), tokenDigest)) return { allowed: false, status: 401, reason: 'token' };
    return { allowed: true };
  };

  return {
    token,
    get port() {
      return port();
    },
    get origin() {
      return `http://${LOOPBACK}:${port()}`;
    },
    url: (path = '/') => withToken('http', path),
    socketUrl: (path = '/') => withToken('ws', path),
    checkRequest: check,
    checkUpgrade: check,
    guard: (listener) => (request, response) => {
      for (const [name, value] of Object.entries(DEFENSIVE_HEADERS)) response.setHeader(name, value);
      const verdict = check(request);
      if (!verdict.allowed) return refuse(response, verdict.status);
      listener(request, response);
    },
    guardUpgrade: (listener) => (request, socket, head) => {
      const verdict = check(request);
      if (!verdict.allowed) return refuseUpgrade(socket, verdict.status);
      listener(request, socket, head);
    },
    listen: (server) =>
      new Promise<void>((resolve, reject) => {
        const failed = (error: Error) => reject(error);
        server.once('error', failed);
        server.listen(options.port ?? 0, LOOPBACK, () => {
          server.off('error', failed);
          boundPort = (server.address() as AddressInfo).port;
          resolve();
        });
      }),
  };
}

function presentedToken(request: IncomingMessage): string | undefined {
  const header = request.headers[TOKEN_HEADER];
  if (typeof header === 'string') return header;
  // The request target is a path; the base only makes it parseable.
  return new URL(request.url ?? '/', `http://${LOOPBACK}`).searchParams.get('token') ?? undefined;
}

/** Both sides hashed first: equal lengths for `timingSafeEqual`, and no early exit on a length mismatch. */
function tokenMatches(presented: string | undefined, expected: Buffer): boolean {
  return timingSafeEqual(digest(presented ?? ''), expected);
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function refuse(response: ServerResponse, status: 401 | 403): void {
  response.writeHead(status, { 'content-length': '0', connection: 'close' }).end();
}

/** Answers an upgrade request with a bare status and closes the socket (for a listener's own refusals too). */
export function refuseUpgrade(socket: Duplex, status: 401 | 403 | 404): void {
  if (!socket.writable) return void socket.destroy();
  socket.once('finish', () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
}
