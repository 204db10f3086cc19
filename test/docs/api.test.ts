import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The API reference (`npm run docs`, TypeDoc): the project's own conversion has no warning (a broken link or an
 * undocumented export of the root entry point would be one), and the check of the root's documentation does
 * fail on a small project that leaves an export undocumented. `--emit none`: the HTML is CI's (`.ci/run`).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TYPEDOC = join(ROOT, 'node_modules/typedoc/bin/typedoc');
const PLUGIN = join(ROOT, 'docs/tools/typedoc-root-documented.mjs');
const fixture = mkdtempSync(join(tmpdir(), 'agentchart-typedoc-'));
afterAll(() => rmSync(fixture, { recursive: true, force: true }));

function typedoc(args: string[], cwd: string) {
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [TYPEDOC, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output: output.replace(/\u001b\[[0-9;]*m/g, '') }));
  });
}

describe('the API reference', () => {
  it('converts every entry point with no warning', async () => {
    const ran = await typedoc(['--options', 'docs/typedoc.config.mjs', '--emit', 'none'], ROOT);
    expect(ran.output).toContain('Loaded plugin');
    expect(ran.output).not.toMatch(/\[warning\]|\[error\]/);
    expect(ran.code).toBe(0);
  }, 300_000);

  it('fails on an undocumented export of the root entry point, or a broken link', async () => {
    const write = (name: string, text: string) => writeFileSync(join(fixture, name), text);
    write('tsconfig.json', JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', target: 'es2022' } }));
    write('package.json', JSON.stringify({ name: 'fixture', type: 'module' }));
    write(
      'index.ts',
      [
        '/** Documented. */',
        'export function documented(): void {}',
        'export function undocumented(): void {}',
        '/** An interface. */',
        'export interface Shape {',
        '  /** Documented. */',
        '  width: number;',
        '  height: number;',
        '}',
        '/** Says {@link nowhere}. */',
        'export const linked = 1;',
        '',
      ].join('\n'),
    );
    // A second entry point, left undocumented: only the root's exports must be documented.
    write('kit.ts', 'export function kitHelper(): void {}\n');
    const options = [
      '--entryPoints',
      'index.ts',
      '--entryPoints',
      'kit.ts',
      '--plugin',
      PLUGIN,
      '--treatWarningsAsErrors',
      '--disableSources',
      '--emit',
      'none',
    ];
    const ran = await typedoc([...options, '--validation.invalidLink'], fixture);
    expect(ran.code).not.toBe(0);
    expect(ran.output).toContain('agentchart: the export undocumented has no documentation');
    expect(ran.output).toContain('agentchart: Shape.height has no documentation');
    expect(ran.output).not.toContain('the export documented has');
    expect(ran.output).not.toContain('kitHelper');
    expect(ran.output).toMatch(/Failed to resolve link to "nowhere"/);
  }, 120_000);
});
