import { existsSync } from 'node:fs';
import type { SessionStore } from '../store/types.js';
import { AgentError } from '../domain/errors.js';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** Resolves when the command should stop (SIGINT / SIGTERM by default). */
  stopped?: Promise<void>;
  /** Called with the studio's URL once it listens (tests read it here). */
  onListening?: (url: string) => void;
  /** How long a PostgreSQL server may take to accept the connection (ms; default 10 s). */
  connectTimeoutMs?: number;
}

export const USAGE = [
  'Usage: agentchart studio (--store <sqlite file> | --postgres <url>) [--port <n>] [--open]',
  '',
  'Browses a session store in the studio: every stored session, each step of it (charts, conversation,',
  'counters as of that step), and fork from any step. It listens on 127.0.0.1 only; the URL it prints',
  'carries a token that is new at every start.',
  '',
  '  --store <file>    a SQLite store written by sqliteStore(file) (agentchart/sqlite)',
  '  --postgres <url>  a PostgreSQL store (postgresStore, agentchart/postgres; needs the pg package)',
  '  --port <n>        the port (default: any free port)',
  '  --open            open the page in the default browser',
].join('\n');

class UsageError extends Error {}

interface StudioArgs {
  store: { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };
  port: number;
  open: boolean;
}

export function parseStudioArgs(argv: readonly string[]): StudioArgs {
  let store: StudioArgs['store'] | null = null;
  let port = 0;
  let open = false;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] as string;
    const [name, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, null];
    const value = () => {
      const given = inline ?? argv[++index];
      if (given === undefined || given === '' || given.startsWith('--')) throw new UsageError(`${name} needs a value`);
      return given;
    };
    if (name === '--store' || name === '--postgres') {
      if (store) throw new UsageError('give one store: --store <sqlite file> or --postgres <url>');
      store = name === '--store' ? { kind: 'sqlite', path: value() } : { kind: 'postgres', url: postgresUrl(value()) };
    } else if (name === '--port') {
      port = Number(value());
      if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError(`--port needs a port number`);
    } else if (name === '--open' && inline === null) open = true;
    else
      throw new UsageError(
        arg.startsWith('-') ? `unknown option ${name}` : `unexpected argument ${JSON.stringify(arg)}`,
      );
  }
  if (!store) throw new UsageError('name the store: --store <sqlite file> or --postgres <url>');
  return { store, port, open };
}

/** A postgres:// URL; anything else pg would read as a host name (`not-a-url` connects to "base"). */
function postgresUrl(given: string): string {
  let protocol: string | null = null;
  try {
    protocol = new URL(given).protocol;
  } catch {
    // Reported below.
  }
  if (protocol !== 'postgres:' && protocol !== 'postgresql:')
    throw new UsageError(
      `--postgres needs a postgres:// URL (postgres://user:password@host:5432/db; a socket directory goes in ?host=/dir), got ${JSON.stringify(given)}`,
    );
  return given;
}

/** Runs `agentchart <command> …`; resolves with the exit status. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.out(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command !== 'studio') {
    io.err(`agentchart: unknown command "${command}"\n\n${USAGE}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(USAGE);
    return 0;
  }
  let args: StudioArgs;
  try {
    args = parseStudioArgs(rest);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`agentchart studio: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  let store: (SessionStore & { close(): unknown }) | null = null;
  try {
    store = await openStore(args.store, io.connectTimeoutMs ?? CONNECT_TIMEOUT_MS);
    // The store is read once now: a file that is not a store fails here, with its name.
    await store.list();
    const { startStudio } = await import('../studio.js');
    const studio = await startStudio({ store, port: args.port, open: args.open });
    io.out(`agentchart studio: open ${studio.url}`);
    io.out(`(${describe(args.store)}; listening on 127.0.0.1 only; Ctrl-C stops it)`);
    io.onListening?.(studio.url);
    await (io.stopped ?? signalled());
    await studio.stop();
    return 0;
  } catch (error) {
    const detail = error instanceof AgentError ? `${error.code}: ${error.message}` : (error as Error).message;
    io.err(`agentchart studio: ${detail}`);
    return 1;
  } finally {
    await store?.close();
  }
}

/** A server that takes the connection and never answers fails the command instead of hanging it. */
const CONNECT_TIMEOUT_MS = 10_000;

async function openStore(
  store: StudioArgs['store'],
  connectTimeoutMs: number,
): Promise<SessionStore & { close(): unknown }> {
  if (store.kind === 'sqlite') {
    // A path that names nothing is a typo, not a new empty store to browse.
    if (store.path !== ':memory:' && !existsSync(store.path))
      throw new AgentError('StoreUnavailable', `no such file: ${store.path}`);
    const { sqliteStore } = await import('../sqlite.js');
    return sqliteStore(store.path);
  }
  const [{ postgresStore }, { poolFor }] = await Promise.all([
    import('../postgres.js'),
    import('../store/postgres-client.js'),
  ]);
  const pool = await poolFor(store.url, { connectionTimeoutMillis: connectTimeoutMs });
  const postgres = postgresStore({ pool });
  // A pool passed in stays its creator's: the command ends it.
  return { ...postgres, close: () => postgres.close().then(() => pool.end()) };
}

function describe(store: StudioArgs['store']): string {
  if (store.kind === 'sqlite') return `store ${store.path}`;
  const url = new URL(store.url);
  if (url.password) url.password = '***';
  return `store ${url.href}`;
}

function signalled(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
