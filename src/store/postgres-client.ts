import { AgentError } from '../domain/errors.js';
import { lazyPackage, type OptionalPackage } from '../peers/optional-sdk.js';

/** The part of `pg`'s Pool the store uses (structural, so `pg` stays an optional peer). */
export interface PgPool {
  connect(): Promise<PgClient>;
  end(): Promise<void>;
  on?(event: 'error', listener: (error: Error) => void): unknown;
}

export interface PgClient {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
  release(error?: Error | boolean): void;
}

/** The pg Pool options the library sets. */
interface PgPoolOptions {
  connectionString: string;
  /** How long a connection may take (ms); pg's default, 0, waits as long as the server does. */
  connectionTimeoutMillis?: number;
}

type PgModule = {
  default?: { Pool: new (options: PgPoolOptions) => PgPool };
  Pool?: new (options: PgPoolOptions) => PgPool;
};

const PG: OptionalPackage = { name: 'pg', range: '8.x', neededBy: 'agentchart/postgres' };
const loadPg = lazyPackage(PG, async () => (await import('pg')) as PgModule);

/** A pool for a connection string, from the optional peer `pg`; missing → MissingDependency with the install command. */
export async function poolFor(
  connectionString: string,
  options: Omit<PgPoolOptions, 'connectionString'> = {},
): Promise<PgPool> {
  const pg = await loadPg();
  const Pool = pg.Pool ?? pg.default?.Pool;
  if (!Pool)
    throw new AgentError(
      'MissingDependency',
      'agentchart/postgres: the installed pg package has no Pool export (pg 8.x is needed): npm install pg@8',
    );
  const created = new Pool({ ...options, connectionString });
  // An idle connection the server dropped is discarded by the pool; unheard, its 'error' would crash the process.
  created.on?.('error', () => {});
  return created;
}
