import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { SessionInfo } from '../../src/studio/protocol.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('npm run demo -- --studio', () => {
  it('prints the studio URL, shows the demo session live while it runs, and exits 0 when it is over', async () => {
    // stdin is not a terminal: the demo neither waits for Enter nor for the page; the pretend user approves.
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/demo/main.ts', '--studio'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await expect.poll(() => /agentchart studio: open (\S+)/.test(stdout), { timeout: 20_000 }).toBe(true);
    const url = new URL(/agentchart studio: open (\S+)/.exec(stdout)![1]!);
    expect(url.hostname).toBe('127.0.0.1');
    await expect
      .poll(
        async () => {
          const response = await fetch(new URL(`/api/sessions?token=${url.searchParams.get('token')}`, url));
          return ((await response.json()) as SessionInfo[]).map((info) => [info.id, info.label, info.live]);
        },
        { timeout: 20_000 },
      )
      .toEqual([['demo', 'demo session', true]]);
    expect(await exited).toBe(0);
    expect(stdout).toContain('write_file approved by the pretend user (resolveApproval, version');
    expect(stdout).toContain('checkInvariants: ok');
  }, 60_000);
});
