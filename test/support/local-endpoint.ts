import { request } from 'node:http';
import { createRequire } from 'node:module';

/** Clients that play a page, a local process or an attacker against a local endpoint. */

export interface ClientSocket {
  on(event: 'message', listener: (data: { toString(): string }) => void): void;
  on(event: 'open' | 'close', listener: () => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  on(event: 'unexpected-response', listener: (request: unknown, response: RawResponse) => void): void;
  send(data: string): void;
  close(): void;
}
interface RawResponse {
  statusCode?: number;
  headers: Record<string, string | string[] | undefined>;
  on(event: 'data', listener: (chunk: Buffer) => void): void;
  on(event: 'end', listener: () => void): void;
}

// `ws` as resolved by @statelyai/inspect (the relay's own copy): it sends no Origin unless told to.
const requireFromInspect = createRequire(createRequire(import.meta.url).resolve('@statelyai/inspect'));
const WebSocket = requireFromInspect('ws') as new (
  url: string,
  options?: { headers?: Record<string, string> },
) => ClientSocket;

export interface OpenSocket {
  socket: ClientSocket;
  messages: Array<{ type: string; [key: string]: unknown }>;
  closed: Promise<void>;
}

/** Opens a WebSocket; rejects on any refusal. */
export function connect(url: string, headers?: Record<string, string>): Promise<OpenSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, headers ? { headers } : undefined);
    const messages: Array<{ type: string }> = [];
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('message', (data) => messages.push(JSON.parse(data.toString()) as { type: string }));
    socket.on('open', () => resolve({ socket, messages, closed }));
    socket.on('error', reject);
  });
}

export interface Refusal {
  status: number;
  body: string;
  corsHeaders: string[];
}

/** Attempts a WebSocket upgrade that must be refused: resolves with the refusal's status and body. */
export function refusedUpgrade(url: string, headers?: Record<string, string>): Promise<Refusal> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, headers ? { headers } : undefined);
    socket.on('open', () => {
      socket.close();
      reject(new Error(`the upgrade to ${url} was accepted`));
    });
    socket.on('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk.toString()));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body, corsHeaders: corsHeadersOf(response.headers) }),
      );
    });
    socket.on('error', (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

export interface HttpAnswer extends Refusal {
  headers: Record<string, string | string[] | undefined>;
}

/** A plain HTTP request with exactly the headers given (Host included). */
export function httpRequest(url: string, headers: Record<string, string>, method = 'GET'): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body,
          headers: response.headers,
          corsHeaders: corsHeadersOf(response.headers),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

function corsHeadersOf(headers: Record<string, unknown>): string[] {
  return Object.keys(headers).filter((name) => name.toLowerCase().startsWith('access-control-'));
}

/** The URL with its token removed, or replaced. */
export function withToken(url: string, token: string | null): string {
  const parsed = new URL(url);
  if (token === null) parsed.searchParams.delete('token');
  else parsed.searchParams.set('token', token);
  return parsed.href;
}
