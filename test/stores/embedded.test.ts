import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'vitest';
import { memoryStore } from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { storeConformance } from './conformance.js';
import { stepRecordsConformance } from './steps-conformance.js';

describe('memoryStore conformance', () => {
  storeConformance((now) => {
    const store = memoryStore({ now });
    return { store, reopen: () => store, close: () => {} };
  });
});

const memoryUnderTest = (now: () => number) => {
  const store = memoryStore({ now });
  return { store, reopen: () => store, close: () => {} };
};

describe('memoryStore step records', () => stepRecordsConformance(memoryUnderTest));

describe('sqliteStore step records', () => stepRecordsConformance(sqliteUnderTest));

describe('sqliteStore conformance', () => {
  storeConformance((now) => {
    const path = join(mkdtempSync(join(tmpdir(), 'agentchart-store-')), 'sessions.db');
    const handles = [sqliteStore(path, { now })];
    const reopen = () => {
      const handle = sqliteStore(path, { now });
      handles.push(handle);
      return handle;
    };
    return {
      store: handles[0] as ReturnType<typeof sqliteStore>,
      reopen,
      close: () => handles.forEach((h) => h.close()),
    };
  });
});

function sqliteUnderTest(now: () => number) {
  const path = join(mkdtempSync(join(tmpdir(), 'agentchart-store-')), 'sessions.db');
  const handles = [sqliteStore(path, { now })];
  const reopen = () => {
    const handle = sqliteStore(path, { now });
    handles.push(handle);
    return handle;
  };
  return {
    store: handles[0] as ReturnType<typeof sqliteStore>,
    reopen,
    close: () => handles.forEach((h) => h.close()),
  };
}
