// agentchart/postgres: the SessionStore on PostgreSQL, on the optional peer dependency `pg`.
export { postgresStore } from './store/postgres.js';
export type { PostgresStore, PostgresStoreOptions } from './store/postgres.js';
export type { PgPool, PgClient } from './store/postgres-client.js';
export { POSTGRES_SCHEMA_VERSION } from './store/postgres-schema.js';
