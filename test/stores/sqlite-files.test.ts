import { copyFileSync, existsSync, mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { createAgent } from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';

/**
 * A SQLite file holds what it promises: after a clean shutdown (the agents closed, or the store)
 * the .db file alone holds every session; the handle closes when its last user does; a damaged or
 * unopenable file is a typed AgentError naming it — never a raw driver error, never a silent empty
 * session.
 */

const dir = () => mkdtempSync(join(tmpdir(), 'agentchart-sqlite-files-'));
const quoted = (path: string) => new RegExp(`"${path.replace(/[/.\\-]/g, '\\$&')}"`);

/** A session of three runs on `path`, left open (the agent and the store): the state a crash would leave. */
async function sessionOn(path: string) {
  const store = sqliteStore(path);
  const agent = createAgent({
    model: scriptedModel([{ text: 'one' }, { text: 'two' }, { text: 'three' }, { text: 'four' }]),
    store,
    sessionId: 'kept',
  });
  await agent.ready;
  for (const prompt of ['a', 'b', 'c']) await agent.prompt(prompt).result;
  return { store, agent, history: [...agent.messages] };
}

/** The .db file copied alone (a backup, a deploy that forgets the -wal): what it loads. */
async function loadCopyOfMainFile(path: string) {
  const copy = join(dir(), 'copy.db');
  copyFileSync(path, copy);
  const store = sqliteStore(copy);
  const loaded = await store.load('kept');
  store.close();
  return loaded;
}

/** The files as a crash leaves them: the main file and its log copied while the store is open. */
async function crashCopy() {
  const path = join(dir(), 'sessions.db');
  const { store, history } = await sessionOn(path);
  const copy = join(dir(), 'crashed.db');
  copyFileSync(path, copy);
  copyFileSync(`${path}-wal`, `${copy}-wal`);
  store.close();
  expect(statSync(`${copy}-wal`).size).toBeGreaterThan(0);
  return { copy, history };
}

describe('a clean shutdown leaves every session in the main file', () => {
  it('agent.close(): the .db copied without its -wal loads the whole session', async () => {
    const path = join(dir(), 'sessions.db');
    const { agent, history } = await sessionOn(path);
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(0);
    await agent.close();
    expect((await loadCopyOfMainFile(path))?.history).toEqual(history);
  });

  it('store.close() with an agent never closed: the same', async () => {
    const path = join(dir(), 'sessions.db');
    const { store, history } = await sessionOn(path);
    store.close();
    expect((await loadCopyOfMainFile(path))?.history).toEqual(history);
  });

  it('the file stays open while an agent on it lives, and closes with the last user: the log is gone, calls are refused', async () => {
    const path = join(dir(), 'sessions.db');
    const { store, agent } = await sessionOn(path);
    store.close();
    // The agent still uses it.
    expect((await agent.prompt('d').result).status).toBe('completed');
    await agent.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    await expect(store.load('kept')).rejects.toMatchObject({
      name: 'AgentError',
      code: 'StoreUnavailable',
      message: expect.stringMatching(quoted(path)),
    });
    const again = sqliteStore(path);
    expect((await again.load('kept'))?.history.filter((m) => m.role === 'user')).toHaveLength(4);
    again.close();
  });
});

describe('damaged or unopenable files are typed errors naming the file, never an empty session', () => {
  it('a zero-length main file beside a write-ahead log: StoreCorrupted, the files left as they were', async () => {
    const { copy } = await crashCopy();
    truncateSync(copy, 0);
    const walBefore = readFileSync(`${copy}-wal`);
    expect(() => sqliteStore(copy)).toThrow(
      expect.objectContaining({
        name: 'AgentError',
        code: 'StoreCorrupted',
        message: expect.stringMatching(/zero-length file beside a write-ahead log/),
      }),
    );
    expect(() => sqliteStore(copy)).toThrow(quoted(copy));
    expect(statSync(copy).size).toBe(0);
    expect(readFileSync(`${copy}-wal`).equals(walBefore)).toBe(true);
  });

  it('a write-ahead log with a damaged committed frame: StoreCorrupted naming the log; an intact copy loads', async () => {
    const { copy, history } = await crashCopy();
    const intact = join(dir(), 'intact.db');
    copyFileSync(copy, intact);
    copyFileSync(`${copy}-wal`, `${intact}-wal`);
    const store = sqliteStore(intact);
    expect((await store.load('kept'))?.history).toEqual(history);
    store.close();

    const wal = readFileSync(`${copy}-wal`);
    // Bytes of the first frame's page: SQLite would stop reading the log there, dropping all after it.
    wal.fill(0x41, 32 + 24 + 200, 32 + 24 + 264);
    writeFileSync(`${copy}-wal`, wal);
    expect(() => sqliteStore(copy)).toThrow(
      expect.objectContaining({
        code: 'StoreCorrupted',
        message: expect.stringMatching(/write-ahead log ".*crashed\.db-wal" is damaged \(frame 1 fails its checksum/),
      }),
    );
  });

  it('a garbled write-ahead log header: StoreCorrupted', async () => {
    const { copy } = await crashCopy();
    const wal = readFileSync(`${copy}-wal`);
    wal.fill(0x00, 0, 8);
    writeFileSync(`${copy}-wal`, wal);
    expect(() => sqliteStore(copy)).toThrow(
      expect.objectContaining({
        code: 'StoreCorrupted',
        message: expect.stringMatching(/not a write-ahead log header/),
      }),
    );
  });

  it('stale -wal/-shm beside a zero-length main file in the same process: typed, not "database is locked"', async () => {
    const path = join(dir(), 'sessions.db');
    const { store } = await sessionOn(path);
    truncateSync(path, 0);
    expect(() => sqliteStore(path)).toThrow(expect.objectContaining({ name: 'AgentError', code: 'StoreCorrupted' }));
    store.close();
  });

  it('a file another connection keeps locked: StoreUnavailable naming the file, at open and at a write; once it lets go, the store works', async () => {
    // A database in SQLite's default journal mode: switching it to WAL needs the lock the other holds.
    const path = join(dir(), 'sessions.db');
    const other = new DatabaseSync(path);
    other.exec('CREATE TABLE unrelated (x); BEGIN EXCLUSIVE; INSERT INTO unrelated VALUES (1);');
    const locked = expect.objectContaining({
      name: 'AgentError',
      code: 'StoreUnavailable',
      message: expect.stringMatching(/is locked by another connection/),
    });
    expect(() => sqliteStore(path, { busyTimeoutMs: 50 })).toThrow(locked);
    expect(() => sqliteStore(path, { busyTimeoutMs: 50 })).toThrow(quoted(path));
    other.exec('COMMIT');
    const store = sqliteStore(path, { busyTimeoutMs: 50 });
    // Once open (WAL), a writer holding the lock still makes a write wait, then refuse, typed.
    other.exec('BEGIN IMMEDIATE');
    await expect(store.acquire('s', 'owner', 1_000)).rejects.toMatchObject(locked);
    other.exec('ROLLBACK');
    other.close();
    expect(await store.acquire('s', 'owner', 1_000)).toMatchObject({ owner: 'owner', version: -1 });
    store.close();
  });
});
