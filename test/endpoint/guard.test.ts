import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEndpoint, TOKEN_HEADER, type LocalEndpoint } from '../../src/endpoint/guard.js';
import { connect, httpRequest, refusedUpgrade, withToken } from '../support/local-endpoint.js';

/** The local-endpoint guard on a real server: a page, a socket and the refusals, rule by rule. */

interface Ws {
  handleUpgrade(
    request: unknown,
    socket: Duplex,
    head: Buffer,
    callback: (socket: { send(data: string): void }) => void,
  ): void;
  close(): void;
}
const requireFromInspect = createRequire(createRequire(import.meta.url).resolve('@statelyai/inspect'));
const { WebSocketServer } = requireFromInspect('ws') as { WebSocketServer: new (options: { noServer: true }) => Ws };

const SECRET = 'the session transcript';
const servers: Server[] = [];
const upgraded = new Set<Duplex>();

async function start(port?: number): Promise<{ endpoint: LocalEndpoint; server: Server }> {
  const endpoint = createLocalEndpoint({ port });
  const server = createServer(
    endpoint.guard((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end(SECRET);
    }),
  );
  const sockets = new WebSocketServer({ noServer: true });
  server.on(
    'upgrade',
    endpoint.guardUpgrade((request, socket, head) =>
      sockets.handleUpgrade(request, socket, head, (client) => client.send(JSON.stringify({ type: SECRET }))),
    ),
  );
  server.on('upgrade', (_request, socket: Duplex) => upgraded.add(socket));
  servers.push(server);
  await endpoint.listen(server);
  return { endpoint, server };
}

afterEach(async () => {
  for (const socket of upgraded) socket.destroy();
  upgraded.clear();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('createLocalEndpoint: the guard of every local endpoint', () => {
  it('listens on 127.0.0.1 only and prints a URL carrying a fresh 256-bit token', async () => {
    const { endpoint, server } = await start();
    const other = await start();
    expect((server.address() as AddressInfo).address).toBe('127.0.0.1');
    expect(endpoint.url('/')).toBe(`http://127.0.0.1:${endpoint.port}/?token=${endpoint.token}`);
    expect(endpoint.socketUrl('/?role=viewer')).toBe(
      `ws://127.0.0.1:${endpoint.port}/?role=viewer&token=${endpoint.token}`,
    );
    expect(endpoint.token).toMatch(/^[0-9a-f]{64}$/);
    expect(other.endpoint.token).not.toBe(endpoint.token);
    expect(endpoint.origin).toBe(`http://127.0.0.1:${endpoint.port}`);
  });

  it('serves a request with the token (query or header) from its own origin, with defensive headers and no CORS', async () => {
    const { endpoint } = await start();
    const host = `127.0.0.1:${endpoint.port}`;
    const page = await httpRequest(endpoint.url('/'), { host });
    expect(page).toMatchObject({ status: 200, body: SECRET, corsHeaders: [] });
    expect(page.headers).toMatchObject({
      'x-frame-options': 'DENY',
      'content-security-policy': "frame-ancestors 'none'",
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    });
    const bare = withToken(endpoint.url('/api'), null);
    const fetched = await httpRequest(bare, { host, origin: endpoint.origin, [TOKEN_HEADER]: endpoint.token }, 'POST');
    expect(fetched).toMatchObject({ status: 200, body: SECRET });
    const viaLocalhost = await httpRequest(endpoint.url('/'), {
      host: `localhost:${endpoint.port}`,
      origin: `http://localhost:${endpoint.port}`,
    });
    expect(viaLocalhost).toMatchObject({ status: 200, body: SECRET });
  });

  it('answers 401 with no content without the token, or with a wrong one', async () => {
    const { endpoint } = await start();
    const host = `127.0.0.1:${endpoint.port}`;
    const wrong = endpoint.token.replace(/^./, (digit) => (digit === '0' ? '1' : '0'));
    for (const url of [withToken(endpoint.url('/'), null), withToken(endpoint.url('/'), wrong)])
      expect(await httpRequest(url, { host })).toMatchObject({ status: 401, body: '', corsHeaders: [] });
    const header = await httpRequest(withToken(endpoint.url('/'), null), { host, [TOKEN_HEADER]: 'x' }, 'POST');
    expect(header).toMatchObject({ status: 401, body: '' });
  });

  it('refuses, with no content, a foreign Host (DNS rebinding), Origin: null and every other origin, even with the token', async () => {
    const { endpoint } = await start();
    const other = await start();
    const host = `127.0.0.1:${endpoint.port}`;
    const cases: Array<Record<string, string>> = [
      { host: `attacker.example:${endpoint.port}` },
      { host: `127.0.0.1:${other.endpoint.port}` },
      { host: '127.0.0.1' },
      { host, origin: 'null' },
      { host, origin: 'http://attacker.example' },
      { host, origin: other.endpoint.origin },
      { host, origin: `https://127.0.0.1:${endpoint.port}` },
    ];
    for (const headers of cases) {
      expect(await httpRequest(endpoint.url('/'), headers)).toMatchObject({ status: 403, body: '', corsHeaders: [] });
      expect(await httpRequest(endpoint.url('/'), headers, 'POST')).toMatchObject({ status: 403, body: '' });
    }
    // A CORS preflight gets nothing that would let the browser go on.
    const preflight = await httpRequest(
      endpoint.url('/'),
      { host, origin: other.endpoint.origin, 'access-control-request-method': 'POST' },
      'OPTIONS',
    );
    expect(preflight).toMatchObject({ status: 403, body: '', corsHeaders: [] });
  });

  it('applies the same rules to socket upgrades: refused ones get their status, no socket and no message', async () => {
    const { endpoint } = await start();
    const own = await connect(endpoint.socketUrl('/'), { origin: endpoint.origin });
    for (let attempt = 0; attempt < 100 && own.messages.length === 0; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(own.messages).toEqual([{ type: SECRET }]);
    own.socket.close();
    // A local process (no Origin) with the token is a client as well.
    const local = await connect(endpoint.socketUrl('/'));
    local.socket.close();

    const refusals = [
      [withToken(endpoint.socketUrl('/'), null), {}, 401],
      [withToken(endpoint.socketUrl('/'), '0'.repeat(64)), { origin: endpoint.origin }, 401],
      [endpoint.socketUrl('/'), { origin: 'null' }, 403],
      [endpoint.socketUrl('/'), { origin: 'http://localhost:1' }, 403],
      [endpoint.socketUrl('/'), { host: `rebound.example:${endpoint.port}` }, 403],
    ] as const;
    for (const [url, headers, status] of refusals)
      expect(await refusedUpgrade(url, headers)).toEqual({ status, body: '', corsHeaders: [] });
  });

  it('reports a port it cannot listen on, and refuses everything before it listens', async () => {
    const { endpoint } = await start();
    const second = createLocalEndpoint({ port: endpoint.port });
    expect(() => second.port).toThrow('The local endpoint is not listening yet.');
    const server = createServer();
    await expect(second.listen(server)).rejects.toThrow(/EADDRINUSE/);
    expect(() => second.url('/')).toThrow('not listening');
  });
});
