import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent } from 'agentchart';
import { postgresStore } from 'agentchart/postgres';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';
import { runCli, USAGE } from '../../src/cli/commands.js';
import type { SessionInfo, StepView } from '../../src/studio/protocol.js';
import type { StepSummary } from '../../src/store/step-types.js';
import { startPostgres } from '../support/postgres.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * `agentchart studio`: its arguments, a real process browsing a SQLite store until it is stopped, and
 * the command on a PostgreSQL store (a server the test starts): the sessions, a step, a fork.
 */

const started = await startPostgres();
const postgres = 'server' in started ? started.server : null;
if (!postgres) console.log(`agentchart studio --postgres skipped: ${'skipped' in started ? started.skipped : ''}`);
afterAll(() => postgres?.stop());

async function cli(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const status = await runCli(argv, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { status, out: out.join('\n'), err: err.join('\n') };
}

describe('agentchart studio', () => {
  it('says how to use it, and refuses a missing store, a stray argument or a file that is not there', async () => {
    expect(await cli(['--help'])).toEqual({ status: 0, out: USAGE, err: '' });
    expect(await cli([])).toMatchObject({ status: 2, out: USAGE });
    expect(await cli(['serve'])).toMatchObject({ status: 2, err: expect.stringContaining('unknown command "serve"') });
    expect(await cli(['studio'])).toMatchObject({
      status: 2,
      err: expect.stringContaining('name the store: --store <sqlite file> or --postgres <url>'),
    });
    expect(await cli(['studio', '--store', 'a.db', '--postgres', 'postgres://x'])).toMatchObject({
      status: 2,
      err: expect.stringContaining('give one store'),
    });
    expect(await cli(['studio', '--store', 'a.db', '--port', 'x'])).toMatchObject({ status: 2 });
    expect(await cli(['studio', '--store'])).toMatchObject({
      status: 2,
      err: expect.stringContaining('--store needs a value'),
    });
    const missing = join(mkdtempSync(join(tmpdir(), 'agentchart-cli-')), 'nope.db');
    expect(await cli(['studio', '--store', missing])).toEqual({
      status: 1,
      out: '',
      err: `agentchart studio: StoreUnavailable: no such file: ${missing}`,
    });
  });

  it('serves the sessions of a SQLite file on loopback until SIGTERM, then exits 0', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'agentchart-cli-')), 'sessions.db');
    const store = sqliteStore(path);
    const agent = createAgent({ model: scriptedModel([{ text: 'stored' }]), store, sessionId: 'kept' });
    await agent.ready;
    await agent.prompt('hello').result;
    await agent.close();
    store.close();

    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/agentchart.ts', 'studio', '--store', path], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await expect
      .poll(() => /open (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64})/.test(stdout), { timeout: 20_000 })
      .toBe(true);
    const url = new URL(/open (\S+)/.exec(stdout)![1]!);
    const sessions = (await (
      await fetch(new URL(`/api/sessions?token=${url.searchParams.get('token')}`, url))
    ).json()) as SessionInfo[];
    expect(sessions.map((info) => [info.id, info.stored, info.live, info.controllable])).toEqual([
      ['kept', true, false, false],
    ]);
    expect((await fetch(new URL('/api/sessions', url))).status).toBe(401);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 40_000);

  it.skipIf(!postgres)(
    'serves a PostgreSQL store: its sessions, each step, and a fork that leaves the original',
    async () => {
      const connectionString = postgres!.connectionString;
      const store = postgresStore({ connectionString });
      const agent = createAgent({
        model: scriptedModel([{ text: 'first' }, { text: 'second' }]),
        store,
        sessionId: 'pg-kept',
      });
      await agent.ready;
      await agent.prompt('one').result;
      await agent.prompt('two').result;
      await agent.close();
      const original = JSON.stringify(await store.loadEvents('pg-kept'));

      let listening: (url: string) => void = () => {};
      const url = new Promise<URL>((resolve) => (listening = (href) => resolve(new URL(href))));
      let stop: () => void = () => {};
      const out: string[] = [];
      const status = runCli(['studio', '--postgres', connectionString], {
        out: (line) => out.push(line),
        err: (line) => out.push(line),
        stopped: new Promise<void>((resolve) => (stop = resolve)),
        onListening: listening,
      });
      const studio = await url;
      const token = studio.searchParams.get('token')!;
      const get = async <T>(path: string) => {
        const response = await fetch(new URL(path, studio), { headers: { 'x-agentchart-token': token } });
        expect(response.status).toBe(200);
        return (await response.json()) as T;
      };
      const sessions = await get<SessionInfo[]>('/api/sessions');
      expect(sessions.map((info) => [info.id, info.stored, info.live, info.controllable])).toEqual([
        ['pg-kept', true, false, false],
      ]);
      // The step at the end of the first run: one question answered, no run in progress.
      const steps = await get<StepSummary[]>('/api/steps?id=pg-kept');
      const events = JSON.parse(original) as Array<{ type: string }>;
      const firstEnd = events.findIndex((event) => event.type === 'agentEnd') + 1;
      const summary = steps.find((step) => step.events === firstEnd);
      expect(summary).toBeDefined();
      const step = await get<StepView>(`/api/step?id=pg-kept&version=${summary!.version}`);
      expect(step.view.history.map((message) => message.role)).toEqual(['user', 'assistant']);
      expect(step.view).toMatchObject({ running: false, machines: { master: null, turn: null } });

      const last = steps.at(-1)!;
      const forked = await fetch(new URL('/api/fork', studio), {
        method: 'POST',
        headers: { 'x-agentchart-token': token, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'pg-kept', version: last.version, to: 'pg-fork' }),
      });
      expect(await forked.json()).toMatchObject({ ok: true, fork: { sessionId: 'pg-fork', version: last.version } });
      expect((await get<SessionInfo[]>('/api/sessions')).map((info) => info.id).sort()).toEqual(['pg-fork', 'pg-kept']);
      stop();
      expect(await status).toBe(0);
      expect(out[0]).toMatch(/^agentchart studio: open http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}$/);

      // The fork holds the original's log; the original is byte for byte what it was.
      expect(JSON.stringify(await store.loadEvents('pg-fork'))).toBe(original);
      expect(JSON.stringify(await store.loadEvents('pg-kept'))).toBe(original);
      await store.close();
    },
    60_000,
  );
});
