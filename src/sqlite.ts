// agentchart/sqlite: the embedded durable store (needs the optional dependency better-sqlite3).
export { sqliteStore } from './store/sqlite.js';
