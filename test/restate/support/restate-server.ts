// Starts a real restate-server (from node_modules) on free loopback ports with a temp base dir, and
// worker processes running test/restate/support/worker.ts; stops everything afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { availableOrSkip } from '../../support/tools.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SERVER_BIN = join(ROOT, 'node_modules', '.bin', 'restate-server');
const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

export interface RestateServer {
  ingress: string;
  admin: string;
  dir: string;
  /** POST <ingress>/<object>/<key>/<handler>; the parsed JSON answer and the status. */
  call<T = unknown>(object: string, key: string, handler: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** One-way call (`/send`): accepted at once, runs when a worker is up. */
  send(object: string, key: string, handler: string, body?: unknown): Promise<{ status: number; invocationId: string }>;
  register(uri: string): Promise<void>;
  stop(): Promise<void>;
}

export function restateServerAvailable(): boolean {
  return existsSync(SERVER_BIN);
}

/** Whether the suite can run: restate-server is installed (npm ci installs it); says so when it is not. */
export function serverInstalled(suite: string): boolean {
  const missing = restateServerAvailable()
    ? null
    : `restate-server in node_modules, which is missing (npm ci installs it)`;
  return availableOrSkip('RESTATE', suite, missing);
}

export async function startRestateServer(): Promise<RestateServer> {
  const dir = mkdtempSync(join(tmpdir(), 'agentchart-restate-'));
  const [ingressPort, adminPort, nodePort] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(SERVER_BIN, ['--base-dir', dir, '--no-logo', '--listen-mode', 'tcp'], {
    env: {
      ...process.env,
      RESTATE_BIND_IP: '127.0.0.1',
      RESTATE_DISABLE_TELEMETRY: 'true',
      DO_NOT_TRACK: '1',
      RESTATE_INGRESS__BIND_PORT: String(ingressPort),
      RESTATE_ADMIN__BIND_PORT: String(adminPort),
      RESTATE_BIND_PORT: String(nodePort),
      RESTATE_LOG_FILTER: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr = (stderr + String(chunk)).slice(-4000)));
  const ingress = `http://127.0.0.1:${ingressPort}`;
  const admin = `http://127.0.0.1:${adminPort}`;
  try {
    await waitUntil(
      'the Restate server',
      async () => (await fetch(`${admin}/health`)).ok && (await fetch(`${ingress}/restate/health`)).ok,
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${stderr}`);
  }
  const post = async (url: string, body: unknown) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : JSON.parse(text) };
  };
  return {
    ingress,
    admin,
    dir,
    async call<T>(object: string, key: string, handler: string, body?: unknown) {
      return (await post(`${ingress}/${object}/${encodeURIComponent(key)}/${handler}`, body)) as {
        status: number;
        body: T;
      };
    },
    async send(object, key, handler, body) {
      const answer = await post(`${ingress}/${object}/${encodeURIComponent(key)}/${handler}/send`, body);
      return { status: answer.status, invocationId: (answer.body as { invocationId: string }).invocationId };
    },
    async register(uri) {
      const answer = await post(`${admin}/deployments`, { uri, force: true });
      if (answer.status >= 300)
        throw new Error(`registering ${uri} failed: ${answer.status} ${JSON.stringify(answer.body)}`);
    },
    async stop() {
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Worker {
  port: number;
  uri: string;
  process: ChildProcess;
  kill(): Promise<void>;
}

/** A worker process serving the test agent object on `port`; resolves once it listens. */
export async function startWorker(port: number, logDir: string): Promise<Worker> {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    cwd: ROOT,
    env: { ...process.env, AGENTCHART_WORKER_PORT: String(port), AGENTCHART_WORKER_LOG: logDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += String(chunk)));
  child.stderr?.on('data', (chunk) => (output = (output + String(chunk)).slice(-8000)));
  await waitUntil(`the worker on port ${port}`, async () => {
    if (child.exitCode !== null) throw new Error(`worker exited: ${output}`);
    return output.includes('listening');
  });
  return {
    port,
    uri: `http://127.0.0.1:${port}`,
    process: child,
    kill: () => stopProcess(child, 'SIGKILL'),
  };
}

function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

export { sleep, waitUntil };

/** A server and one worker registered with it, for a test file. */
export async function startServerWithWorker(logDir: string): Promise<{ server: RestateServer; worker: Worker }> {
  const server = await startRestateServer();
  const worker = await startWorker(await freePort(), logDir);
  await server.register(worker.uri);
  return { server, worker };
}
