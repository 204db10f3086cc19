import { AgentError } from '../domain/errors.js';

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

/** A pool for a connection string, from the optional peer `pg`; missing → MissingDependency with the install command. */
export async function poolFor(connectionString: string): Promise<PgPool> {
  let pg: {
    default?: { Pool: new (options: { connectionString: string }) => PgPool };
    Pool?: new (options: { connectionString: string }) => PgPool;
  };
  try {
    pg = (await import('pg')) as typeof pg;
  } catch (error) {
    if (isModuleNotFound(error)) {
      throw new AgentError(
        'MissingDependency',
        'agentchart/postgres needs the optional peer dependency pg (8.x): npm install pg',
      );
    }
    throw error;
  }
  const Pool = pg.Pool ?? pg.default?.Pool;
  if (!Pool)
    throw new AgentError(
      'MissingDependency',
      'agentchart/postgres: the installed pg package has no Pool export (pg 8.x is needed): npm install pg@8',
    );
  const created = new Pool({ connectionString });
  // An idle connection the server dropped is discarded by the pool; unheard, its 'error' would crash the process.
  created.on?.('error', () => {});
  return created;
}

function isModuleNotFound(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || isModuleNotFound(cause, depth + 1);
}
