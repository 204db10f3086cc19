import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Spawned {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

/**
 * Bundles a TypeScript child into one ES module under test/.build (package imports resolved by the
 * tsconfig paths, `pg` left to node_modules): it starts in a fraction of the time `tsx` takes, which
 * matters when a test starts and kills dozens of them.
 */
export async function bundleChild(script: URL): Promise<URL> {
  const { build } = await import('esbuild');
  const outfile = join(ROOT, 'test', '.build', `${basename(fileURLToPath(script), '.ts')}-${process.pid}.mjs`);
  await build({
    entryPoints: [fileURLToPath(script)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile,
    external: ['pg'],
    tsconfig: join(ROOT, 'tsconfig.json'),
    logLevel: 'warning',
    // Bundled CommonJS dependencies call require(): give the module one.
    banner: {
      js: "import { createRequire as __agentchartRequire } from 'node:module'; const require = __agentchartRequire(import.meta.url);",
    },
  });
  return pathToFileURL(outfile);
}

/** Runs a child with its config in the environment variable `envName`: a bundle as is, TypeScript with `node --import tsx`. */
export function spawnChild(script: URL, envName: string, config: unknown, timeoutMs = 60_000): Spawned {
  const path = fileURLToPath(script);
  const child = spawn(process.execPath, path.endsWith('.mjs') ? [path] : ['--import', 'tsx', path], {
    cwd: ROOT,
    env: { ...process.env, [envName]: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve, reject) => {
      child.on('error', reject);
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout, stderr });
      });
    },
  );
  return { child, exited };
}

/** The JSON lines a running child has printed so far (its reports), read whenever asked. */
export function withReports<T>(spawned: Spawned): Spawned & { reports(): T[] } {
  let out = '';
  spawned.child.stdout?.on('data', (chunk) => (out += chunk));
  const reports = () =>
    out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as T);
  return { ...spawned, reports };
}

export function lastJson<T>(stdout: string): T {
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null') as T;
}

export function lines(path: string): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
}

/** Runs tasks with at most `limit` in flight (2 cores: each child is a whole Node process). */
export async function inPool<T, R>(items: T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Polls until `condition` holds (real processes: a real wait, bounded). */
export async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A child's entry point: exits 0 when `main` resolves, 1 (with the error on stderr) when it rejects. */
export function runAsProcess(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
