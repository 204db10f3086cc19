import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Scenarios that need a process of their own — a peak RSS (the kernel's high-water mark cannot be
 * reset), a heap that holds nothing else — run as a child: the same Node, tsx, and agentchart
 * resolved as in this process (its build when `npm run bench` maps it there). The child's last line
 * on stdout is its JSON result.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const distConfig = fileURLToPath(new URL('./tsconfig.dist.json', import.meta.url));

/** Runs `bench/<script>` with `args` in a child process and returns the JSON of its last stdout line. */
export function runChild<T>(script: string, args: string[], nodeFlags: string[] = [], timeoutMs = 900_000): Promise<T> {
  const fromDist = import.meta.resolve('agentchart').includes('/dist/');
  const env = { ...process.env, ...(fromDist ? { TSX_TSCONFIG_PATH: distConfig } : {}) };
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', `bench/${script}`, ...args], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !last.startsWith('{')) {
        const why = signal ? `signal ${signal}` : `exit ${code}`;
        reject(new Error(`bench: ${script} ${args.join(' ')} failed (${why}):\n${stderr.slice(-4000)}`));
        return;
      }
      resolve(JSON.parse(last) as T);
    });
  });
}
