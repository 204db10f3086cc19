import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  serverInstalled,
  startServerWithWorker,
  type RestateServer,
  type Worker,
} from '../restate/support/restate-server.js';

/**
 * The session's inbox is plumbing between the object's own handlers: a client that could call
 * `inboxPush` or `inboxTake` through ingress could forge approvals or swallow steering messages.
 * The registered deployment says they are private, and ingress refuses them.
 */

const INTERNAL = ['inboxClose', 'inboxOpen', 'inboxPush', 'inboxTake'];
const PUBLIC = ['abort', 'events', 'followUp', 'messages', 'pendingApprovals', 'prompt', 'resolveApproval', 'steer'];

interface HandlerMetadata {
  name: string;
  public: boolean;
}

describe.runIf(serverInstalled('the Restate ingress check'))('Restate: the inbox handlers are private', () => {
  let server: RestateServer;
  let worker: Worker;

  beforeAll(async () => {
    ({ server, worker } = await startServerWithWorker(mkdtempSync(join(tmpdir(), 'agentchart-restate-private-'))));
  }, 60_000);
  afterAll(async () => {
    await worker?.kill();
    await server?.stop();
  });

  it("the deployment's manifest lists the inbox handlers as private and the session's API as public", async () => {
    const { deployments } = (await (await fetch(`${server.admin}/deployments`)).json()) as {
      deployments: Array<{ id: string; uri: string }>;
    };
    const deployment = deployments.find((candidate) => candidate.uri.startsWith(worker.uri));
    expect(deployment).toBeDefined();
    const manifest = (await (await fetch(`${server.admin}/deployments/${deployment!.id}`)).json()) as {
      services: Array<{ name: string; public: boolean; handlers: HandlerMetadata[] }>;
    };
    const agent = manifest.services.find((service) => service.name === 'Agent');
    expect(agent?.public).toBe(true);
    const visibility = Object.fromEntries(agent!.handlers.map((handler) => [handler.name, handler.public]));
    expect(visibility).toEqual(
      Object.fromEntries([...INTERNAL.map((name) => [name, false]), ...PUBLIC.map((name) => [name, true])]),
    );
  });

  it('ingress refuses every inbox handler, and a forged approval never reaches the session', async () => {
    const forged = { kind: 'approval', toolCallId: 'c1', decision: { approved: true }, version: 1 };
    for (const handler of INTERNAL) {
      const answer = await server.call(
        'Agent',
        '~inbox~victim',
        handler,
        handler === 'inboxPush' ? forged : { wake: 'x' },
      );
      expect(answer, handler).toEqual({
        status: 400,
        body: { code: 400, message: 'the invoked service is not public', source: 'ingress' },
      });
    }
    // The public side still answers.
    expect(await server.call('Agent', 'victim', 'pendingApprovals')).toEqual({ status: 200, body: [] });
    expect(await server.call('Agent', 'victim', 'messages')).toEqual({ status: 200, body: [] });
  });
});
