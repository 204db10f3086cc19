import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { DatabaseSync } from 'node:sqlite';
import { AgentError } from '../domain/errors.js';
import { migrateSqlite } from './sqlite-schema.js';
import { ensureStepTables } from './sqlite-steps.js';
import { walProblem } from './sqlite-wal.js';

/**
 * The SQLite file of a `sqliteStore`, kept to what it promises: opened only if what is on disk
 * can be read as written (never a silent empty session), every driver error turned into a typed
 * AgentError naming the file, its write-ahead log moved into the main file whenever a user lets
 * it go (a clean shutdown leaves every session in the .db alone), and the handle closed when the
 * last user has.
 */

/** How long a statement waits for another connection's lock before the store says the file is locked. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

/**
 * Pages the write-ahead log grows to before a commit moves it into the main file (SQLite's default is 1,000).
 * That move is where synchronous = NORMAL syncs (the log, then the file), twice per checkpoint whatever it
 * copies: at 1,000 pages it was about half of what a step's commit cost. Either way a commit is in the log
 * (written, not synced) before `commitStepSync` returns, so a killed process loses nothing a subscriber saw;
 * a power loss or an OS crash can roll the file back to its last checkpoint — the steps of at most this many
 * pages of log (16 MB at SQLite's 4 KB pages), never part of a step. Closing moves the whole log into the file.
 */
export const WAL_CHECKPOINT_PAGES = 4_000;

export function openSqliteFile(path: string, busyTimeoutMs: number): DatabaseSync {
  if (path !== ':memory:' && !path.startsWith('file:')) refuseDamagedFiles(path);
  // Loaded on use so the core stays browser-safe and Node < 22.13 gets a typed error, not a crash at import.
  let sqlite: typeof import('node:sqlite');
  try {
    sqlite = createRequire(import.meta.url)('node:sqlite') as typeof import('node:sqlite');
  } catch (error) {
    throw new AgentError(
      'MissingDependency',
      `sqliteStore needs node:sqlite (Node ≥ 22.13; this is ${process.version}): ${(error as Error).message}`,
    );
  }
  let db: DatabaseSync;
  try {
    db = new sqlite.DatabaseSync(path);
  } catch (error) {
    throw new AgentError('StoreUnavailable', `session store "${path}" cannot be opened: ${(error as Error).message}`);
  }
  try {
    return guarded(path, 'open', () => {
      db.exec(
        `PRAGMA busy_timeout = ${busyTimeoutMs}; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES};`,
      );
      migrateSqlite(db);
      ensureStepTables(db);
      return db;
    });
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Files SQLite would open as an empty or older database: a zero-length main file beside a write-ahead
 * log (the database was truncated; the log alone is not a database), and a log SQLite would drop.
 */
function refuseDamagedFiles(path: string): void {
  const wal = `${path}-wal`;
  const walSize = sizeOf(wal);
  if (walSize === null || walSize === 0) return;
  if (sizeOf(path) === 0) {
    throw new AgentError(
      'StoreCorrupted',
      `session store "${path}" is a zero-length file beside a write-ahead log of ${walSize} bytes: the database was truncated; restore it (with its -wal) from a backup`,
    );
  }
  const problem = walProblem(readFileSync(wal));
  if (problem) {
    throw new AgentError(
      'StoreCorrupted',
      `session store "${path}": its write-ahead log "${wal}" is damaged (${problem}); SQLite would drop what it holds. Restore both files from a backup`,
    );
  }
}

function sizeOf(file: string): number | null {
  try {
    return existsSync(file) ? statSync(file).size : null;
  } catch {
    return null;
  }
}

/**
 * The users of one open file: the store's creator and every agent on it. A user that lets go moves
 * the log into the main file; the last one closes the handle.
 */
export class SqliteUsers {
  private users = 1;

  constructor(private readonly db: DatabaseSync) {}

  get open(): boolean {
    return this.db.isOpen;
  }

  attach(): () => void {
    this.users += 1;
    let attached = true;
    return () => {
      if (!attached) return;
      attached = false;
      this.letGo();
    };
  }

  private creatorClosed = false;

  /** The creator's `close()` (once). */
  close(): void {
    if (this.creatorClosed) return;
    this.creatorClosed = true;
    this.letGo();
  }

  private letGo(): void {
    this.users -= 1;
    if (!this.db.isOpen) return;
    // A clean shutdown leaves every session in the main file (a backup of the .db alone holds them).
    // Closing the last connection checkpoints too; another process reading keeps the log for now.
    // On a full disk the log cannot move: it stays, whole, and SQLite reads it on the next open.
    try {
      this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch {
      // Kept in the log (see above).
    }
    if (this.users > 0) return;
    try {
      this.db.close();
    } catch {
      // Closing never throws at the caller: what the file holds is written already.
    }
  }
}

// SQLite's primary result codes (the low byte of an extended code).
const SQLITE_PERM = 3;
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_NOTADB = 26;

/**
 * A driver error as a typed AgentError naming the file, never a raw one and never a silent reset:
 * a damaged file is StoreCorrupted; a write that fails is StoreFailed saying so (no space, an I/O
 * error), not "corrupted"; a file that cannot be opened, is locked or read-only is StoreUnavailable.
 */
export function guarded<T>(path: string, phase: 'open' | 'read' | 'write', run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof AgentError) throw error;
    const errcode = (error as { errcode?: unknown }).errcode;
    const primary = typeof errcode === 'number' ? errcode & 0xff : -1;
    const message = (error as Error).message;
    const file = `session store "${path}"`;
    if (primary === SQLITE_CORRUPT || primary === SQLITE_NOTADB)
      throw new AgentError('StoreCorrupted', `${file} is corrupted or not a database: ${message}`);
    if (primary === SQLITE_BUSY || primary === SQLITE_LOCKED)
      throw new AgentError('StoreUnavailable', `${file} is locked by another connection (${message})`);
    if (phase === 'write') {
      const why =
        primary === SQLITE_FULL
          ? 'no space left on the device'
          : primary === SQLITE_IOERR
            ? 'an I/O error'
            : 'an error';
      throw new AgentError('StoreFailed', `${file}: the write failed: ${why} (${message})`);
    }
    if (primary === SQLITE_IOERR)
      throw new AgentError(
        'StoreCorrupted',
        `${file} could not be read (an I/O error: ${message}); it may be truncated`,
      );
    if (primary === SQLITE_CANTOPEN || primary === SQLITE_READONLY || primary === SQLITE_PERM || phase === 'open')
      throw new AgentError('StoreUnavailable', `${file} is unavailable: ${message}`);
    throw new AgentError('StoreUnavailable', `${file}: ${message}`);
  }
}
