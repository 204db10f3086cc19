import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli/commands.js';
import { misuseHarness } from './hostile-support.js';

// `agentchart studio` misused: stores it cannot read, PostgreSQL URLs and servers that never answer.

misuseHarness();

async function cli(argv: string[], io: Partial<CliIo> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const status = await runCli(['studio', ...argv], {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    stopped: new Promise(() => {}),
    ...io,
  });
  return { status, out: out.join('\n'), err: err.join('\n') };
}

/** A port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('agentchart studio, misused', () => {
  it('a file that is not a store, a directory, a pipe: one clear line and exit 1, never a stack', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentchart-hostile-cli-'));
    const text = join(dir, 'notes.db');
    writeFileSync(text, 'these are my notes, not a database\n');
    const pipe = join(dir, 'pipe.db');
    execFileSync('mkfifo', [pipe]);
    expect(await cli(['--store', text])).toEqual({
      status: 1,
      out: '',
      err: expect.stringMatching(
        /^agentchart studio: StoreCorrupted: session store ".*notes\.db" is corrupted or not a database/,
      ),
    });
    for (const path of [dir, pipe]) {
      const answer = await cli(['--store', path]);
      expect(answer, path).toMatchObject({ status: 1, out: '' });
      expect(answer.err).toMatch(/^agentchart studio: StoreUnavailable: session store ".*" cannot be opened/);
      expect(answer.err).not.toMatch(/\n\s+at /);
    }
  });

  it('--postgres with something that is not a postgres:// URL is a usage error, not a connection to a host named after it', async () => {
    for (const given of ['not-a-url', 'localhost:5432/db', 'http://127.0.0.1:5432/db', '/var/run/postgresql']) {
      expect(await cli(['--postgres', given]), given).toMatchObject({
        status: 2,
        err: expect.stringContaining(`--postgres needs a postgres:// URL`),
      });
    }
  });

  it('--postgres on a port nothing listens on, or a server that never answers: a clear line and exit 1, no hang', async () => {
    const refused = await cli(['--postgres', `postgres://agent@127.0.0.1:${await closedPort()}/db`]);
    expect(refused).toEqual({
      status: 1,
      out: '',
      err: expect.stringMatching(/^agentchart studio: StoreUnavailable: postgres store: connect ECONNREFUSED/),
    });
    // A server that takes the connection and says nothing (a wrong port, a stuck proxy).
    const silent = createNetServer((socket) => socket.on('data', () => {}));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const started = performance.now();
    const waited = await cli(['--postgres', `postgres://agent@127.0.0.1:${port}/db`], { connectTimeoutMs: 300 });
    expect(waited).toEqual({
      status: 1,
      out: '',
      err: expect.stringMatching(/^agentchart studio: StoreUnavailable: postgres store: .*timeout/),
    });
    expect(performance.now() - started).toBeLessThan(10_000);
    silent.close();
  });
});
