// 200 concurrent sessions on Restate over two workers (two deployments of the same object: an
// invocation stays on the deployment it started on); the second is SIGKILLed mid-run and restarted.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent, Message, RunResult } from 'agentchart';
import { checkInvariants } from 'agentchart/testing';
import {
  freePort,
  serverInstalled,
  startRestateServer,
  startWorker,
  waitUntil,
  type RestateServer,
  type Worker,
} from './support/restate-server.js';
import { countLines, recordedPids } from './support/session-log.js';

const SESSIONS = 200;

describe.runIf(serverInstalled('the Restate load suite'))(
  'Restate: many sessions over workers that come and go',
  () => {
    let server: RestateServer;
    const workers: Worker[] = [];
    const logs = mkdtempSync(join(tmpdir(), 'agentchart-restate-logs-'));

    beforeAll(async () => {
      server = await startRestateServer();
    }, 60_000);

    afterAll(async () => {
      for (const worker of workers) await worker.kill();
      await server?.stop();
    });

    it(
      'on Restate: 200 concurrent sessions over 2 workers, one ' +
        'killed and restarted mid-run, all finish with parity',
      async () => {
        const ids = Array.from({ length: SESSIONS }, (_, index) => `load-${index}`);
        const started = (id: string) => countLines(logs, id, 'tool-start k1') > 0;
        const first = await startWorker(await freePort(), logs);
        workers.push(first);
        await server.register(first.uri);
        const answers = ids.slice(0, SESSIONS / 2).map((id) => server.call<RunResult>('Agent', id, 'prompt', 'go'));
        await waitUntil('the first half running', async () => ids.slice(0, SESSIONS / 2).filter(started).length >= 10);

        // The second worker becomes the latest deployment: the second half starts there.
        const second = await startWorker(await freePort(), logs);
        workers.push(second);
        await server.register(second.uri);
        answers.push(...ids.slice(SESSIONS / 2).map((id) => server.call<RunResult>('Agent', id, 'prompt', 'go')));
        await waitUntil('the second half running', async () => ids.slice(SESSIONS / 2).filter(started).length >= 10);

        // The second worker dies mid-run; a fresh process takes its place at the same address.
        await second.kill();
        workers.push(await startWorker(second.port, logs));

        const results = await Promise.all(answers);
        for (const [index, { status, body }] of results.entries()) {
          expect(status, ids[index]).toBe(200);
          expect(body, ids[index]).toMatchObject({
            status: 'completed',
            endReason: 'naturalEnd',
            counters: { turns: 2, toolCallsExecuted: 2 },
          });
        }
        // Both workers served sessions; the killed one's sessions finished on its successor.
        const pids = new Set(ids.flatMap((id) => recordedPids(logs, id)));
        expect(pids.size).toBe(3);
        expect(ids.filter((id) => new Set(recordedPids(logs, id)).size === 2).length).toBeGreaterThan(0);
        await Promise.all(
          ids.map(async (id) => {
            const [events, messages] = await Promise.all([
              server.call<AgentEvent[]>('Agent', id, 'events', { afterSeq: -1 }).then((answer) => answer.body),
              server.call<Message[]>('Agent', id, 'messages').then((answer) => answer.body),
            ]);
            expect(checkInvariants(events, messages).violations, id).toEqual([]);
            expect(
              events.map((event) => event.seq),
              id,
            ).toEqual(events.map((_, index) => index));
          }),
        );
      },
      120_000,
    );
  },
);
