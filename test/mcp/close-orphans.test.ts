import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleChild, lastJson, spawnChild } from '../support/processes.js';
import { HOSTILE, kill, missingServers, tempDir } from './support/servers.js';

const skip = missingServers();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(skip !== null)('MCP toolset close() in an app that ends right after it', () => {
  it('leaves no stdio server behind, even one that ignores the end of its stdin', async () => {
    const pidFile = join(tempDir('orphans'), 'server.pid');
    const child = await bundleChild(new URL('./support/close-and-leave.ts', import.meta.url));
    const { code, stdout, stderr } = await spawnChild(child, 'CLOSE_AND_LEAVE', { server: HOSTILE, pidFile }).exited;
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(lastJson<{ tools: number }>(stdout).tools).toBeGreaterThan(0);
    expect(existsSync(pidFile)).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    try {
      // close() resolved only once the server was gone (the SDK signals it after 2 s): nothing is left running.
      expect(alive(pid)).toBe(false);
    } finally {
      if (alive(pid)) await kill(pid);
    }
  });
});
