import { mkdtempSync, rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteStore } from 'agentchart/sqlite';
import { StepRecorder, type StepRowTag } from '../src/store/step-records.js';
import { median, round2 } from './stats.js';
import { recordedSteps } from './stores.js';

/**
 * What the per-step records (time travel, fork) add to a stored session: bytes per step against
 * the events and messages the session stores anyway, and time per step — the record's encoding (a
 * keyframe or a patch against the step before) and its row's insert — against the whole commitStep.
 * On the steps of a real 200-turn file-reading session (the stores benchmark's), on SQLite.
 */

export interface StepRecordCost {
  steps: number;
  keyframes: number;
  /** Bytes of the records table's `record` column per step. */
  recordBytesPerStep: number;
  /** Bytes of events and messages per step: what the session stores without the records. */
  sessionBytesPerStep: number;
  /** records / (records + events + messages). */
  recordShare: number;
  /** The record's encoding per step (µs, median of rounds). */
  encodeUs: number;
  /** Its row's insert per step, alone, in a SQLite file with the store's settings (µs, median of rounds). */
  insertUs: number;
  /** A whole commitStep per step on SQLite, records included (µs, median of rounds). */
  commitUs: number;
}

export async function stepRecordCost(rounds: number): Promise<StepRecordCost> {
  const steps = await recordedSteps(200);
  const dir = mkdtempSync(join(tmpdir(), 'agentchart-bench-records-'));
  try {
    const commit: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const path = join(dir, `session-${round}.db`);
      const store = sqliteStore(path);
      const begin = performance.now();
      for (const step of steps)
        store.commitStepSync('s', { ...step, checkpoint: { ...step.checkpoint, sessionId: 's' } });
      commit.push(((performance.now() - begin) * 1000) / steps.length);
      store.close();
    }
    const db = new DatabaseSync(join(dir, 'session-0.db'));
    const sum = (sql: string) => Number((db.prepare(sql).get() as { n: number | bigint | null }).n ?? 0);
    const recordBytes = sum('SELECT SUM(length(record)) AS n FROM steps');
    const keyframes = sum('SELECT COUNT(*) AS n FROM steps WHERE base = version');
    const sessionBytes =
      sum('SELECT SUM(length(event)) AS n FROM events') + sum('SELECT SUM(length(message)) AS n FROM messages');
    const rows = db.prepare('SELECT version, base, record FROM steps ORDER BY version').all() as Array<{
      version: number;
      base: number;
      record: string;
    }>;
    db.close();

    const encode: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const recorder = new StepRecorder();
      let last: StepRowTag | null = null;
      const begin = performance.now();
      for (const step of steps) {
        const row = recorder.encode('s', step, last, 0);
        last = { version: row.version, base: row.base, committedAt: 0 };
      }
      encode.push(((performance.now() - begin) * 1000) / steps.length);
    }

    const insert: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const scratch = new DatabaseSync(join(dir, `scratch-${round}.db`));
      scratch.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
      scratch.exec(
        'CREATE TABLE steps (sid INTEGER NOT NULL, version INTEGER NOT NULL, base INTEGER NOT NULL, event_count INTEGER NOT NULL, history_length INTEGER NOT NULL, committed_at INTEGER NOT NULL, record TEXT NOT NULL, PRIMARY KEY (sid, version))',
      );
      const statement = scratch.prepare('INSERT INTO steps VALUES (?, ?, ?, ?, ?, ?, ?)');
      // Inside an open transaction, as a step's insert is: the commit itself is the step's, not the record's.
      scratch.exec('BEGIN');
      const begin = performance.now();
      for (const row of rows) statement.run(1, row.version, row.base, 0, 0, 0, row.record);
      insert.push(((performance.now() - begin) * 1000) / rows.length);
      scratch.exec('ROLLBACK');
      scratch.close();
    }
    return {
      steps: steps.length,
      keyframes,
      recordBytesPerStep: round2(recordBytes / steps.length),
      sessionBytesPerStep: round2(sessionBytes / steps.length),
      recordShare: round2(recordBytes / (recordBytes + sessionBytes)),
      encodeUs: round2(median(encode)),
      insertUs: round2(median(insert)),
      commitUs: round2(median(commit)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
