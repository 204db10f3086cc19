import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { McpStdioServer } from 'agentchart/mcp';
import { isRequired } from '../../support/tools.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SUPPORT = fileURLToPath(new URL('./', import.meta.url));
export const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const SWITCHBOARD = join(SUPPORT, 'switchboard-server.mjs');
export const HOSTILE = join(SUPPORT, 'hostile-server.mjs');

/**
 * Why the MCP suites cannot run here, or null: the reference servers come from npm (devDependencies).
 * Throws instead when they are required (AGENTCHART_REQUIRE_MCP=1, set by .ci/run).
 */
export function missingServers(): string | null {
  const missing = [EVERYTHING, FILESYSTEM].filter((path) => !existsSync(path));
  const reason = missing.length > 0 ? `MCP reference servers not installed (${missing.join(', ')}): run npm ci` : null;
  if (reason !== null && isRequired('MCP')) throw new Error(`${reason} (AGENTCHART_REQUIRE_MCP=1)`);
  return reason;
}

export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `agentchart-mcp-${label}-`));
}

/** A stdio server run by this Node, with the stdin observer preloaded (what it reads goes to `log`). */
export function observedStdio(entry: string, args: string[], log: ServerLog): McpStdioServer {
  return {
    command: process.execPath,
    args: ['--import', pathToFileURL(join(SUPPORT, 'observe-stdio.mjs')).href, entry, ...args],
    env: { MCP_OBSERVE_FILE: log.file },
    stderr: 'ignore',
  };
}

/** The server side of a stdio connection, as the observer preload recorded it. */
export class ServerLog {
  readonly file: string;

  constructor(dir: string, name: string) {
    this.file = join(dir, `${name}.jsonl`);
    writeFileSync(this.file, '');
  }

  private entries(): Record<string, unknown>[] {
    return readFileSync(this.file, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
  }

  /** The pids of the server processes started so far, oldest first. */
  pids(): number[] {
    return this.entries().flatMap((entry) => (typeof entry.observedPid === 'number' ? [entry.observedPid] : []));
  }

  /** JSON-RPC messages the server received with this method. */
  received(method: string): Array<{ id?: number; params?: Record<string, unknown> }> {
    return this.entries().filter((entry) => entry.method === method) as Array<{
      id?: number;
      params?: Record<string, unknown>;
    }>;
  }
}

/** Kills a process and waits until it is gone. */
export async function kill(pid: number): Promise<void> {
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`process ${pid} did not die`);
}

export interface HttpServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** server-everything over Streamable HTTP on 127.0.0.1 (port 0: any free port). */
export async function startEverythingHttp(port = 0): Promise<HttpServer> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', pathToFileURL(join(SUPPORT, 'loopback-listen.mjs')).href, EVERYTHING, 'streamableHttp'],
    { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const bound = await new Promise<number>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`server-everything (HTTP) did not start: ${text}`)), 15_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /LISTENING (\d+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`server-everything (HTTP) exited with ${code}: ${text}`)));
  });
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    port: bound,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * Closes a toolset whose server may still be running a cancelled call: the SDK waits up to 2 s for
 * a stdio server to exit after closing its stdin, so the test kills the process as well.
 */
export async function closeQuickly(
  toolset: { close(): Promise<void> } | undefined,
  log: ServerLog | undefined,
): Promise<void> {
  if (!toolset) return;
  const closing = toolset.close();
  const pid = log?.pids().at(-1);
  if (pid !== undefined) await kill(pid).catch(() => {});
  await closing;
}

/** Polls until `check` returns a value (the server side is another process). */
export async function eventually<T>(check: () => T | undefined, what: string, timeoutMs = 5_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs `act` once, at the run's first toolExecutionUpdate (a call is then surely in flight). */
export function atFirstUpdate(
  run: { events: { subscribe(next: (event: { type: string }) => void): unknown } },
  act: () => void,
): void {
  let done = false;
  run.events.subscribe((event) => {
    if (event.type !== 'toolExecutionUpdate' || done) return;
    done = true;
    act();
  });
}
