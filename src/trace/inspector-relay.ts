import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import type { InspectionEvent, Observer } from 'xstate';
import { createLocalEndpoint, LOOPBACK, refuseUpgrade } from '../endpoint/guard.js';
import { isModuleNotFound, missingDependency, type OptionalPackage } from '../peers/optional-sdk.js';

/**
 * The XState inspector for Node, bound to loopback. `@statelyai/inspect`'s own relay
 * (`createInspectorServer`) listens on every interface with no authentication and opens a browser;
 * this one goes through the local-endpoint guard (127.0.0.1 only, a per-start token in its URL, Host
 * and Origin checked on the page and on every socket), takes the app side only from a client that is
 * not a browser page, replays the session to a page opened late, and stops completely so the process
 * can exit.
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
  /**
   * Open this page in a browser: it embeds Stately's inspector UI and feeds it this process's actors.
   * It carries the start's token (`?token=`): without it the relay answers 401 with no content.
   */
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
  handleUpgrade(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    callback: (socket: RelaySocket, request: IncomingMessage) => void,
  ): void;
  close(callback?: () => void): void;
}
interface WsModule {
  WebSocketServer: new (options: { noServer: true }) => RelayServer;
}

export async function startInspector(options: InspectorOptions = {}): Promise<Inspector> {
  const { createWebSocketInspector, WebSocketServer } = await loadDependencies();
  const replayLimit = options.replayLimit ?? 20_000;
  const uiUrl = options.uiUrl ?? STATELY_INSPECTOR_URL;
  const replay: string[] = [];
  const viewers = new Set<RelaySocket>();
  const apps = new Set<RelaySocket>();
  const viewerWaiters = new Set<() => void>();

  const endpoint = createLocalEndpoint({ port: options.port });
  const server = createServer(
    endpoint.guard((request, response) => {
      if (new URL(request.url ?? '/', endpoint.origin).pathname !== '/') {
        response.writeHead(404, { 'content-length': '0' }).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(bridgePage(uiUrl));
    }),
  );
  const relay = new WebSocketServer({ noServer: true });
  let appConnected: () => void = () => undefined;
  const onApp = new Promise<void>((resolve) => (appConnected = resolve));
  server.on(
    'upgrade',
    endpoint.guardUpgrade((request, socket, head) => {
      const role = new URL(request.url ?? '/', endpoint.origin).searchParams.get('role');
      // The app side is this process's inspector client, never a page: a browser always sends Origin.
      if (role === 'app' && request.headers.origin !== undefined) return refuseUpgrade(socket, 403);
      if (role !== 'app' && role !== 'viewer') return refuseUpgrade(socket, 404);
      relay.handleUpgrade(request, socket, head, (client) =>
        role === 'viewer' ? addViewer(client) : (addApp(client), appConnected()),
      );
    }),
  );
  const addViewer = (socket: RelaySocket) => {
    viewers.add(socket);
    for (const message of replay) socket.send(message);
    for (const wake of viewerWaiters) wake();
    socket.on('close', () => viewers.delete(socket));
  };
  const addApp = (socket: RelaySocket) => {
    apps.add(socket);
    socket.on('close', () => apps.delete(socket));
    socket.on('message', (data) => {
      const message = data.toString();
      replay.push(message);
      if (replay.length > replayLimit) replay.shift();
      for (const viewer of viewers) if (viewer.readyState === OPEN) viewer.send(message);
    });
  };

  await endpoint.listen(server).catch((error: Error) => {
    throw new InspectorError(`The inspector could not listen on ${LOOPBACK}:${options.port ?? 0}: ${error.message}`, {
      cause: error,
    });
  });

  // The app side connects before the session starts, so no inspection event waits in a deferred queue.
  const inspector = createWebSocketInspector({ url: endpoint.socketUrl('/?role=app') });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const connected = await Promise.race([
    onApp.then(() => true),
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
    url: endpoint.url('/'),
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

/**
 * The local page: Stately's inspector UI in a frame, fed with the relayed messages (as @statelyai/inspect's
 * own bridge does). It passes the token of its own URL on to its socket; `no-referrer` keeps the token
 * out of the request for the hosted UI.
 */
function bridgePage(uiUrl: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>agentchart · XState inspector</title>
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
const socketUrl = new URL('/', location.href);
socketUrl.protocol = 'ws:';
socketUrl.searchParams.set('role', 'viewer');
socketUrl.searchParams.set('token', new URLSearchParams(location.search).get('token') || '');
const socket = new WebSocket(socketUrl);
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
