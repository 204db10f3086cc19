import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type { InspectionEvent, Observer } from 'xstate';
import { isModuleNotFound, missingDependency, type OptionalPackage } from '../peers/optional-sdk.js';

/**
 * The XState inspector for Node, bound to loopback. `@statelyai/inspect`'s own relay
 * (`createInspectorServer`) listens on every interface with no authentication and opens a browser;
 * this one listens on 127.0.0.1 only, checks Host and Origin, replays the session to a page opened
 * late, and stops completely so the process can exit.
 */

export interface InspectorOptions {
  /** 0 (default): any free port. */
  port?: number;
  /** The inspector UI embedded by the local page. It is hosted by Stately: the browser needs internet. */
  uiUrl?: string;
  /** Inspection messages kept for a page that connects late. Default 20,000. */
  replayLimit?: number;
}

export interface Inspector {
  /** Open this page in a browser: it embeds Stately's inspector UI and feeds it this process's actors. */
  readonly url: string;
  /** Pass as `createAgent({ inspect })`. */
  readonly inspect: Observer<InspectionEvent>;
  /** Pages currently connected. */
  readonly viewers: number;
  /** Resolves true when a page is connected (at once if one is), false after `timeoutMs`. */
  waitForViewer(timeoutMs: number): Promise<boolean>;
  /** Sends what is pending, closes every connection and the server. Idempotent. */
  stop(): Promise<void>;
}

export class InspectorError extends Error {
  override readonly name = 'InspectorError';
}

export const STATELY_INSPECTOR_URL = 'https://stately.ai/inspect';
const LOOPBACK = '127.0.0.1';
const OPEN = 1;

/** The parts of the `ws` package used here (it is `@statelyai/inspect`'s own dependency). */
interface RelaySocket {
  readyState: number;
  bufferedAmount: number;
  send(data: string): void;
  close(): void;
  terminate(): void;
  on(event: 'message', listener: (data: { toString(): string }) => void): void;
  on(event: 'close', listener: () => void): void;
}
interface RelayServer {
  on(event: 'connection', listener: (socket: RelaySocket, request: IncomingMessage) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  close(callback?: () => void): void;
}
interface WsModule {
  WebSocketServer: new (options: {
    server: Server;
    verifyClient: (info: { origin?: string; req: IncomingMessage }) => boolean;
  }) => RelayServer;
}

export async function startInspector(options: InspectorOptions = {}): Promise<Inspector> {
  const { createWebSocketInspector, WebSocketServer } = await loadDependencies();
  const replayLimit = options.replayLimit ?? 20_000;
  const uiUrl = options.uiUrl ?? STATELY_INSPECTOR_URL;
  const replay: string[] = [];
  const viewers = new Set<RelaySocket>();
  const apps = new Set<RelaySocket>();
  const viewerWaiters = new Set<() => void>();

  let port = 0;
  const allowedHosts = () => new Set([`${LOOPBACK}:${port}`, `localhost:${port}`]);
  const server = createServer((request, response) => {
    // A page from another site must not reach this one through DNS rebinding.
    if (!allowedHosts().has(request.headers.host ?? '')) {
      response.writeHead(403, { 'content-type': 'text/plain' }).end('forbidden host\n');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    response.end(bridgePage(`ws://${LOOPBACK}:${port}/?role=viewer`, uiUrl));
  });
  const relay = new WebSocketServer({
    server,
    verifyClient: ({ origin, req }) =>
      allowedHosts().has(req.headers.host ?? '') &&
      (origin === undefined || origin === 'null' || isLocalOrigin(origin, port)),
  });
  // The WebSocket server re-emits the HTTP server's errors; the listen below reports them.
  relay.on('error', () => undefined);
  relay.on('connection', (socket, request) => {
    const role = new URL(request.url ?? '/', `http://${LOOPBACK}`).searchParams.get('role');
    if (role === 'viewer') {
      viewers.add(socket);
      for (const message of replay) socket.send(message);
      for (const wake of viewerWaiters) wake();
      socket.on('close', () => viewers.delete(socket));
      return;
    }
    apps.add(socket);
    socket.on('close', () => apps.delete(socket));
    socket.on('message', (data) => {
      const message = data.toString();
      replay.push(message);
      if (replay.length > replayLimit) replay.shift();
      for (const viewer of viewers) if (viewer.readyState === OPEN) viewer.send(message);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) =>
      reject(
        new InspectorError(`The inspector could not listen on ${LOOPBACK}:${options.port ?? 0}: ${error.message}`, {
          cause: error,
        }),
      ),
    );
    server.listen(options.port ?? 0, LOOPBACK, () => resolve());
  });
  port = (server.address() as AddressInfo).port;

  // The app side connects before the session starts, so no inspection event waits in a deferred queue.
  const appConnected = new Promise<void>((resolve) =>
    relay.on('connection', (_socket, request) => request.url?.includes('role=app') && resolve()),
  );
  const inspector = createWebSocketInspector({ url: `ws://${LOOPBACK}:${port}/?role=app` });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const connected = await Promise.race([
    appConnected.then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 5_000))),
  ]);
  clearTimeout(timer);
  if (!connected) {
    inspector.stop();
    await closeServer(server, relay, []);
    throw new InspectorError('The inspector client could not connect to its local relay within 5 s.');
  }

  let stopping: Promise<void> | null = null;
  return {
    url: `http://${LOOPBACK}:${port}/`,
    inspect: inspector.inspect,
    get viewers() {
      return viewers.size;
    },
    waitForViewer(timeoutMs) {
      if (viewers.size > 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          viewerWaiters.delete(wake);
          resolve(true);
        };
        const timer = setTimeout(() => {
          viewerWaiters.delete(wake);
          resolve(false);
        }, timeoutMs);
        viewerWaiters.add(wake);
      });
    },
    stop() {
      stopping ??= (async () => {
        // Let the app's last messages reach the relay, and the relay's reach the pages.
        await drained([...apps, ...viewers], 1_000);
        inspector.stop();
        await closeServer(server, relay, [...apps, ...viewers]);
      })();
      return stopping;
    },
  };
}

const STATELY_INSPECT: OptionalPackage = {
  name: '@statelyai/inspect',
  range: '>=0.7',
  neededBy: 'startInspector (agentchart/inspect)',
};

async function loadDependencies(): Promise<{
  createWebSocketInspector: typeof import('@statelyai/inspect').createWebSocketInspector;
  WebSocketServer: WsModule['WebSocketServer'];
}> {
  try {
    const { createWebSocketInspector } = await import('@statelyai/inspect');
    // `ws` is resolved from @statelyai/inspect's location: the relay uses the same copy its client does.
    const inspectEntry = createRequire(import.meta.url).resolve('@statelyai/inspect');
    const { WebSocketServer } = createRequire(inspectEntry)('ws') as WsModule;
    return { createWebSocketInspector, WebSocketServer };
  } catch (error) {
    if (isModuleNotFound(error)) throw missingDependency(STATELY_INSPECT);
    const reason = error instanceof Error ? error.message : String(error);
    throw new InspectorError(`The inspector could not load @statelyai/inspect: ${reason}`, { cause: error });
  }
}

function isLocalOrigin(origin: string, port: number): boolean {
  return origin === `http://${LOOPBACK}:${port}` || origin === `http://localhost:${port}`;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function drained(sockets: RelaySocket[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // One turn of the event loop first: messages the app just sent are still in flight to the relay.
  await delay(50);
  while (sockets.some((socket) => socket.readyState === OPEN && socket.bufferedAmount > 0) && Date.now() < deadline)
    await delay(20);
}

async function closeServer(server: Server, relay: RelayServer, sockets: RelaySocket[]): Promise<void> {
  for (const socket of sockets) socket.close();
  await delay(20);
  for (const socket of sockets) socket.terminate();
  await new Promise<void>((resolve) => relay.close(() => resolve()));
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The local page: Stately's inspector UI in a frame, fed with the relayed messages (as @statelyai/inspect's own bridge does). */
function bridgePage(socketUrl: string, uiUrl: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>agentchart · XState inspector</title>
<style>html,body{margin:0;height:100%;font:13px system-ui,sans-serif}#bar{padding:6px 10px;background:#1d2330;color:#fff}iframe{width:100%;height:calc(100% - 30px);border:0}</style></head>
<body>
<div id="bar">agentchart · XState inspector (Stately's UI, loaded from ${uiUrl}; offline? record a trace and open visualizations/viewer.html) · <span id="status">connecting…</span></div>
<iframe id="inspector" src="${uiUrl}"></iframe>
<script>
const frame = document.getElementById('inspector');
const status = document.getElementById('status');
const buffer = [];
let ready = false;
let received = 0;
window.addEventListener('message', (event) => {
  if (event.data && event.data.type === '@statelyai.connected') {
    ready = true;
    for (const item of buffer) frame.contentWindow.postMessage(item, '*');
    buffer.length = 0;
  }
});
const socket = new WebSocket(${JSON.stringify(socketUrl)});
socket.onopen = () => { status.textContent = 'connected'; };
socket.onclose = () => { status.textContent = 'session ended (' + received + ' inspection events)'; };
socket.onmessage = (event) => {
  received += 1;
  const data = JSON.parse(event.data);
  if (ready) frame.contentWindow.postMessage(data, '*');
  else buffer.push(data);
};
</script>
</body>
</html>
`;
}
