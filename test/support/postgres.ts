import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isRequired } from './tools.js';

/**
 * A real PostgreSQL for the tests, started by the test itself from Debian's packages: initdb into a
 * temp dir, pg_ctl on a free loopback port (as the `postgres` user when we are root: the server
 * refuses to run as root), stopped afterwards. `.ci/run` installs the package when it is missing.
 */
export interface PostgresServer {
  connectionString: string;
  stop(): void;
}

export type PostgresStart = { server: PostgresServer } | { skipped: string };

function binDir(): string | null {
  if (process.env.PG_BIN && existsSync(join(process.env.PG_BIN, 'pg_ctl'))) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  const found = spawnSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' }).stdout.trim();
  return found ? dirname(realpathSync(found)) : null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** `runuser` lives in sbin, which a non-login root shell may not have on its PATH. */
function runuserPath(): string {
  return ['/usr/sbin/runuser', '/sbin/runuser'].find((path) => existsSync(path)) ?? 'runuser';
}

/**
 * `durable: false` (tests): no fsync; `true` (benchmarks): the server's defaults. `.ci/run` sets
 * AGENTCHART_REQUIRE_POSTGRES=1: a server that is missing or cannot start then fails the test
 * instead of skipping it.
 */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<PostgresStart> {
  const start = await tryStartPostgres(options);
  if ('skipped' in start && isRequired('POSTGRES')) {
    throw new Error(`PostgreSQL is required here (AGENTCHART_REQUIRE_POSTGRES=1): ${start.skipped}`);
  }
  return start;
}

async function tryStartPostgres({ durable = false }: { durable?: boolean }): Promise<PostgresStart> {
  const bin = binDir();
  if (!bin) return { skipped: 'PostgreSQL is not installed (no pg_ctl; Debian: apt-get install postgresql)' };
  const asRoot = process.getuid?.() === 0;
  let uid: number | null = null;
  if (asRoot) {
    const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    if (id.status !== 0) return { skipped: 'running as root and there is no postgres user to run the server as' };
    uid = Number(id.stdout.trim());
  }
  const dir = mkdtempSync(join(tmpdir(), 'agentchart-pg-'));
  if (uid !== null) chownSync(dir, uid, uid);
  const run = (tool: string, args: string[]) =>
    asRoot
      ? execFileSync(runuserPath(), ['-u', 'postgres', '--', join(bin, tool), ...args], { stdio: 'pipe' })
      : execFileSync(join(bin, tool), args, { stdio: 'pipe' });
  const data = join(dir, 'data');
  const port = await freePort();
  try {
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    const settings = [
      `-p ${port}`,
      `-k ${dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c max_connections=300',
      ...(durable ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
    ];
    run('pg_ctl', ['-D', data, '-o', settings.join(' '), '-w', '-t', '30', '-l', join(dir, 'server.log'), 'start']);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return { skipped: `PostgreSQL could not start: ${stderr || (error as Error).message}` };
  }
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    process.off('exit', stop);
    try {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  // A test process that dies early must not leave a server behind.
  process.on('exit', stop);
  return { server: { connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`, stop } };
}
