import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseTrace } from 'agentchart/trace';
import { parseInstrumentArgs, viewerPathFor } from '../../src/demo/instrument.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** `lingerMs`: from the last line printed to the exit; a leftover timer or socket would keep the process alive. */
function runDemoProcess(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string; lingerMs: number }> {
  let lastOutputAt = Date.now();
  return new Promise((resolve, reject) => {
    // stdin is not a terminal: the demo neither waits for Enter before starting nor before stopping.
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/demo/main.ts', ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      lastOutputAt = Date.now();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the demo did not exit within 40 s:\n${stdout}\n${stderr}`));
    }, 40_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, lingerMs: Date.now() - lastOutputAt });
    });
  });
}

describe('npm run demo -- --inspect --trace', () => {
  it('parses the flags, with clear errors', () => {
    expect(parseInstrumentArgs(['--offline'])).toEqual({ inspect: false, inspectPort: 0, trace: null });
    expect(parseInstrumentArgs(['--inspect', '--trace', 'out.jsonl'])).toEqual({
      inspect: true,
      inspectPort: 0,
      trace: 'out.jsonl',
    });
    expect(parseInstrumentArgs(['--trace=a.jsonl', '--inspect-port=9000'])).toEqual({
      inspect: true,
      inspectPort: 9000,
      trace: 'a.jsonl',
    });
    expect(() => parseInstrumentArgs(['--trace'])).toThrow('--trace needs a file name, e.g. --trace out.jsonl');
    expect(() => parseInstrumentArgs(['--trace', '--inspect'])).toThrow('--trace needs a file name');
    expect(() => parseInstrumentArgs(['--inspect-port=http'])).toThrow(
      '--inspect-port needs a port number, got "--inspect-port=http"',
    );
    expect([viewerPathFor('out.jsonl'), viewerPathFor('dir/run.NDJSON'), viewerPathFor('trace')]).toEqual([
      'out.html',
      'dir/run.html',
      'trace.html',
    ]);
  });

  it('prints the loopback inspector URL, writes the trace and its viewer page, stops the inspector and exits', async () => {
    const trace = join(await mkdtemp(join(tmpdir(), 'agentchart-demo-')), 'session.jsonl');
    const { code, stdout, stderr, lingerMs } = await runDemoProcess(['--offline', '--inspect', '--trace', trace]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(lingerMs).toBeLessThan(2_000);
    expect(stdout).toMatch(
      /^XState inspector: open http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64} \(Stately's inspector UI; it needs internet, the relay listens on 127\.0\.0\.1 only\)$/m,
    );
    const parsed = parseTrace(await readFile(trace, 'utf8'));
    expect(stdout).toContain(
      `trace: ${trace} (${parsed.entries.length} entries) · viewer: ${trace.replace(/\.jsonl$/, '.html')}`,
    );
    expect(stdout.trimEnd().endsWith('inspector stopped')).toBe(true);
    const agentEvents = parsed.entries.flatMap((entry) => (entry.kind === 'agent' ? [entry.event] : []));
    expect(agentEvents.at(-1)).toMatchObject({ type: 'agentEnd', status: 'completed', endReason: 'naturalEnd' });
    const labels = parsed.entries.flatMap((entry) =>
      entry.kind === 'actor' && entry.machineId === 'toolCall' ? [entry.label] : [],
    );
    expect(labels).toEqual([
      'read_file · call_read',
      'grep · call_grep',
      'run_tests · call_tests',
      'write_file · call_write',
      'run_tests · call_parser_tests',
    ]);
    const page = await readFile(trace.replace(/\.jsonl$/, '.html'), 'utf8');
    expect(page).toContain(`data-name="${trace}"`);
    expect(page).toContain('<template data-chart-machine="turn">');
  });
});
