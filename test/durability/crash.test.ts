import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { INTERRUPTED_BY_RESTART, toolCallsOf } from 'agentchart';
import { checkInvariants } from 'agentchart/testing';
import {
  freshSession,
  inPool,
  journalLines,
  KILL_POINTS,
  lastJson,
  runChild,
  type SessionReport,
} from './child-process.js';
import { startPostgres } from '../support/postgres.js';
import { reportStats } from '../support/stats.js';

/**
 * SIGKILL at many step boundaries of one session (model stream, mid batch, steering accepted,
 * backoff, approval, after commits, between turns), then a fresh process resumes it at once: the
 * dead owner ran on this host, so its lease (30 s) is taken over without waiting. On one SQLite
 * file and on one Postgres database (a session per kill point).
 */
const started = await startPostgres();
const server = 'server' in started ? started.server : null;
if (!server) console.log(`postgres crash tests skipped: ${'skipped' in started ? started.skipped : ''}`);
afterAll(() => server?.stop());

async function postgresDatabase(): Promise<string> {
  const admin = new pg.Client({ connectionString: server?.connectionString });
  await admin.connect();
  const name = `crash_${process.pid}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return (server?.connectionString ?? '').replace(/\/postgres$/, `/${name}`);
}

const backends: Array<[string, () => Promise<string | undefined>, boolean]> = [
  ['SQLite', async () => undefined, true],
  ['PostgreSQL', postgresDatabase, server !== null],
];

describe.each(backends)(
  'durable sessions on %s survive SIGKILL at every step boundary',
  (name, database, available) => {
    it.skipIf(!available)(
      `resumes ${KILL_POINTS.length} killed sessions with nothing lost and nothing run twice by surprise`,
      async () => {
        const postgres = await database();
        const outcomes = await inPool(KILL_POINTS, 2, async (point) => {
          const session = {
            ...freshSession(),
            sessionId: `session-${KILL_POINTS.indexOf(point)}`,
            ...(postgres ? { postgres } : {}),
          };
          const started = await runChild({ ...session, mode: 'start', approvals: 'auto', ...point });
          const resumed = await runChild({ ...session, mode: 'resume', approvals: 'auto' });
          return { point, session, started, resumed };
        });

        const summary: string[] = [];
        for (const { point, session, started, resumed } of outcomes) {
          const where = `killed ${point.name}`;
          expect(started.signal, `${where}: the first process was killed`).toBe('SIGKILL');
          expect(resumed.code, `${where}: resume exited cleanly (${resumed.stderr})`).toBe(0);
          const report = lastJson<SessionReport>(resumed.stdout);
          const journal = journalLines(session.journal);
          // Restarted at once: never refused (the dead owner's 30 s lease was taken over on the spot).
          expect(report.refusals, where).toBe(0);
          expect(report.resumed, `${where}: the interrupted run was resumed by loading the session`).toBe(true);

          // The stored log of the whole session (crashed run + its resumption) is well-formed.
          expect(checkInvariants(report.events, report.history).violations, where).toEqual([]);
          expect(report.events.at(-1)?.type, where).toBe('agentEnd');
          expect(
            new Set(report.events.map((event) => event.runId)).size,
            `${where}: the resumed run continues the same run`,
          ).toBe(1);

          // The session finished its work.
          const last = report.history.at(-1);
          expect(
            last?.role === 'assistant' &&
              last.content.some((block) => block.type === 'text' && block.text === 'All done.'),
            where,
          ).toBe(true);

          // A replay 'never' tool never runs twice; an interrupted one gets the restart result instead.
          expect(journal.filter((line) => line === 'never:w1').length, where).toBeLessThanOrEqual(1);
          const neverResult = report.history.find((m) => m.role === 'toolResult' && m.toolCallId === 'w1');
          expect(
            neverResult &&
              neverResult.role === 'toolResult' &&
              ['wrote a', INTERRUPTED_BY_RESTART].includes(neverResult.content),
            where,
          ).toBe(true);
          expect(journal.filter((line) => line === 'deploy:d1').length, where).toBe(1);

          // Every tool call has exactly one result.
          for (const message of report.history) {
            if (message.role !== 'assistant') continue;
            for (const call of toolCallsOf(message)) {
              expect(
                report.history.filter((m) => m.role === 'toolResult' && m.toolCallId === call.id).length,
                `${where}: ${call.id}`,
              ).toBe(1);
            }
          }

          // A steering message accepted before the crash is delivered exactly once.
          const steeringInHistory = report.history.filter(
            (m) => m.role === 'user' && m.content === 'Also mention the changelog.',
          ).length;
          if (journal.includes('steer-accepted')) expect(steeringInHistory, where).toBe(1);
          summary.push(
            `${where}: ready in ${report.readyMs.toFixed(0)} ms (${report.sinceStartMs.toFixed(0)} ms after the process started) resumed=${report.resumed} never-runs=${journal.filter((l) => l === 'never:w1').length} safe-runs=${journal.filter((l) => l === 'safe:f1').length} steering=${steeringInHistory}`,
          );
        }
        reportStats(`${name}:\n${summary.join('\n')}`);
      },
      240_000,
    );
  },
);
