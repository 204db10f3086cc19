import { mkdtempSync, readFileSync, truncateSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentError, createAgent, memoryStore, type SessionStore } from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';
import { step, user } from '../stores/conformance.js';

const tempDb = () => join(mkdtempSync(join(tmpdir(), 'agentchart-store-')), 'sessions.db');

describe('sqliteStore on damaged files', () => {
  it('a file that is not a database is a typed StoreCorrupted error naming the file, never a silent reset', () => {
    const path = tempDb();
    writeFileSync(path, 'this is not sqlite '.repeat(500));
    expect(() => sqliteStore(path)).toThrow(AgentError);
    expect(() => sqliteStore(path)).toThrow(new RegExp(`session store "${path.replace(/[/.]/g, '\\$&')}" is corrupted`));
    expect(readFileSync(path, 'utf8').startsWith('this is not sqlite')).toBe(true);
  });

  it('a truncated database file is reported as corrupted, naming the file', async () => {
    const path = tempDb();
    const store = sqliteStore(path);
    for (let version = 0; version < 50; version++) {
      const messages = Array.from({ length: 40 }, (_, i) => user(`message ${version}.${i} `.repeat(20)));
      await store.commitStep('s1', step(version, version * 40, messages));
    }
    store.close();
    truncateSync(path, Math.floor(statSync(path).size / 3));
    const reopen = async () => {
      const damaged = sqliteStore(path);
      try {
        await damaged.load('s1');
        await damaged.loadEvents('s1');
      } finally {
        damaged.close();
      }
    };
    await expect(reopen()).rejects.toMatchObject({ name: 'AgentError', code: 'StoreCorrupted' });
  });

  it('a checkpoint row with invalid JSON or shape names the session', async () => {
    const path = tempDb();
    const store = sqliteStore(path);
    await store.commitStep('s1', step(0, 0, [user('v0')]));
    store.close();
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(path);
    db.prepare("UPDATE sessions SET head = '{\"sessionId\":\"s1\",\"version\":\"x\"' WHERE session_id = 's1'").run();
    db.close();
    const reopened = sqliteStore(path);
    await expect(reopened.load('s1')).rejects.toMatchObject({ code: 'StoreCorrupted', message: expect.stringMatching(/^session "s1": the stored checkpoint is not valid JSON/) });
    reopened.close();
  });

  it('createAgent on a corrupted session fails its `ready` with the typed error (no silent fresh start)', async () => {
    const store = memoryStore();
    await store.commitStep('s1', step(0, 0, [user('v0')]));
    const broken: SessionStore = { ...store, load: async () => { throw new AgentError('StoreCorrupted', 'session "s1": the stored checkpoint is invalid'); } };
    const agent = createAgent({ model: scriptedModel([]), store: broken, sessionId: 's1' });
    await expect(agent.ready).rejects.toMatchObject({ code: 'StoreCorrupted' });
    expect(() => agent.prompt('hi')).toThrow(expect.objectContaining({ code: 'NotReady' }));
  });
});

describe('an idle session round-trips through a store', () => {
  it('history, counters and queued messages come back in a new agent; a queued steering message is delivered by continue()', async () => {
    const store = memoryStore();
    const first = createAgent({ model: scriptedModel([{ text: 'Hello.', usage: { input: 3, output: 2 } }]), store, sessionId: 's1' });
    await first.ready;
    await first.prompt('hi').result;
    await first.steer('and then?');
    const model = scriptedModel([{ text: 'Then this.' }]);
    const second = createAgent({ model, store, sessionId: 's1' });
    expect(await second.ready).toEqual({ resumedRun: null });
    expect(second.messages).toEqual(first.messages);
    expect(second.counters).toEqual(first.counters);
    expect(second.snapshot().steeringQueue).toEqual([{ role: 'user', content: 'and then?' }]);
    const result = await second.continue().result;
    expect(result.messages.slice(-2)).toEqual([{ role: 'user', content: 'and then?' }, expect.objectContaining({ role: 'assistant' })]);
    expect(result.counters.steeringDelivered).toBe(1);
    expect(model.requests[0]?.messages.at(-1)).toEqual({ role: 'user', content: 'and then?' });
  });
});
