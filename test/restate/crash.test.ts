// A session on Restate whose worker is SIGKILLed at four points finishes on fresh workers: journaled
// replies are not paid for twice, 'never' tools are not re-run, the run keeps its runId and seq.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PendingApproval, RunResult } from 'agentchart';
import { INTERRUPTED_BY_RESTART } from 'agentchart/restate';
import {
  serverInstalled,
  sleep,
  startServerWithWorker,
  startWorker,
  waitUntil,
  type RestateServer,
  type Worker,
} from './support/restate-server.js';
import { countLines, expectParity, readEvents, recordedLines, waitForLine } from './support/session-log.js';

describe.runIf(serverInstalled('the Restate crash suite'))('Restate: a session survives SIGKILLed workers', () => {
  let server: RestateServer;
  let worker: Worker;
  let port: number;
  const logs = mkdtempSync(join(tmpdir(), 'agentchart-restate-logs-'));

  beforeAll(async () => {
    ({ server, worker } = await startServerWithWorker(logs));
    port = worker.port;
  }, 60_000);

  afterAll(async () => {
    await worker?.kill();
    await server?.stop();
  });

  const restartWorker = async () => {
    await worker.kill();
    worker = await startWorker(port, logs);
  };

  it(
    'on Restate: killed mid-model-stream, mid-tool, mid-backoff (R1) and while ' +
      'waiting for approval (T3), the session finishes on fresh workers',
    async () => {
      const sessionId = 'crash-1';
      const answer = server.call<RunResult>('Agent', sessionId, 'prompt', 'Deploy the service.');

      // 1. Mid-model-stream: the first reply has begun streaming.
      await waitForLine(logs, sessionId, 'streaming 0');
      await restartWorker();

      // 2. Mid-tool: the 'never' and the 'safe' tool both run (in parallel) on the second worker.
      await waitForLine(logs, sessionId, 'tool-start w1');
      await waitForLine(logs, sessionId, 'tool-start f1');
      await restartWorker();

      // 3. Mid-backoff: the rate-limited attempt is journaled and the durable timer runs.
      await waitUntil('the retry event', async () =>
        (await readEvents(server, sessionId)).some((event) => event.type === 'retry'),
      );
      await restartWorker();

      // 4. Waiting for approval; then the approval is sent while no worker runs, and takes effect when one starts.
      let pending: PendingApproval[] = [];
      await waitUntil('the pending approval', async () => {
        pending = (await server.call<PendingApproval[]>('Agent', sessionId, 'pendingApprovals')).body;
        return pending.length === 1;
      });
      expect(pending[0]).toMatchObject({ toolCallId: 'd1', toolName: 'deploy', arguments: { value: 'd1' } });
      await worker.kill();
      const sent = await server.send('Agent', sessionId, 'resolveApproval', {
        toolCallId: 'd1',
        decision: { approved: true },
        version: pending[0]!.version,
      });
      expect(sent.status).toBe(202);
      await sleep(300);
      expect(countLines(logs, sessionId, 'tool-start d1')).toBe(0);
      worker = await startWorker(port, logs);

      const { status, body: result } = await answer;
      expect(status).toBe(200);
      expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });

      // The model: the reply cut by the crash is asked again; no journaled reply (the failed one included) is.
      expect(countLines(logs, sessionId, 'model 0')).toBe(2);
      expect(countLines(logs, sessionId, 'model 1')).toBe(2);
      expect(countLines(logs, sessionId, 'model 2')).toBe(1);
      expect(countLines(logs, sessionId, 'model 3')).toBe(0);
      // Tools: the 'never' tool ran once and got the interrupted result; the 'safe' one ran again, with
      // the same idempotency key (the session, the call's turn, its id: the rule of every host).
      expect(recordedLines(logs, sessionId).filter((line) => line.startsWith('tool-start w1'))).toEqual([
        'tool-start w1 crash-1:0:w1',
      ]);
      expect(recordedLines(logs, sessionId).filter((line) => line.startsWith('tool-start f1'))).toEqual([
        'tool-start f1 crash-1:0:f1',
        'tool-start f1 crash-1:0:f1',
      ]);
      expect(countLines(logs, sessionId, 'tool-start d1')).toBe(1);
      const results = result.messages.filter((message) => message.role === 'toolResult');
      expect(results.map((message) => [message.toolCallId, message.content, message.isError])).toEqual([
        ['w1', INTERRUPTED_BY_RESTART, true],
        ['f1', 'fetch f1', false],
        ['d1', 'deploy d1', false],
      ]);

      const events = await expectParity(server, sessionId, result);
      expect(events.filter((event) => event.type === 'retry')).toHaveLength(1);
      expect(events.filter((event) => event.type === 'toolApprovalResolved')).toMatchObject([
        { toolCallId: 'd1', approved: true },
      ]);
      // Progress updates are journaled with their step and published with it, attributed to their call.
      expect(events.filter((event) => event.type === 'toolExecutionUpdate').map((event) => event.toolCallId)).toEqual([
        'f1',
        'd1',
      ]);
      expect(result.counters).toMatchObject({
        turns: 3,
        modelCalls: 4,
        retries: 1,
        toolCallsExecuted: 3,
        toolCallsFailed: 1,
        approvalsRequested: 1,
      });
    },
    60_000,
  );
});
