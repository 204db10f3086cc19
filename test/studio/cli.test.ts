import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createAgent } from 'agentchart';
import { sqliteStore } from 'agentchart/sqlite';
import { scriptedModel } from 'agentchart/testing';
import { runCli, USAGE } from '../../src/cli/commands.js';
import type { SessionInfo } from '../../src/studio/protocol.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** `agentchart studio`: its arguments, and a real process browsing a SQLite store until it is stopped. */

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
});
