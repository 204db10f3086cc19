// agentchart/sqlite: the embedded durable store on Node's built-in node:sqlite (Node ≥ 22.13).
export { sqliteStore } from './store/sqlite.js';
export type { SqliteStoreOptions } from './store/sqlite.js';
