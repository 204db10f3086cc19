import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * An app that builds with `skipLibCheck: false` type-checks every declaration file it reaches. Our
 * declarations must reach no typings that fail where the SDKs' own entry points do not: the MCP
 * SDK's Ajv provider does (TS2709), though importing the MCP client directly compiles. Declarations
 * are emitted from the sources here; an error inside a dependency counts as ours unless importing
 * that dependency directly shows the same error.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
const ENTRIES = Object.keys(pkg.exports).map((subpath) => (subpath === '.' ? 'index' : subpath.slice(2)));
/** What a user of each SDK imports directly. */
const DEPENDENCY_ENTRIES = [
  'zod',
  'xstate',
  'rxjs',
  'openai',
  '@anthropic-ai/sdk',
  '@ai-sdk/provider',
  'ai',
  '@opentelemetry/api',
  '@restatedev/restate-sdk',
  '@modelcontextprotocol/sdk/client/index.js',
  '@modelcontextprotocol/sdk/client/stdio.js',
  '@modelcontextprotocol/sdk/client/streamableHttp.js',
  '@modelcontextprotocol/sdk/types.js',
  '@statelyai/inspect',
  'fast-check',
  'pg',
];

let out: string;

function tsc(args: string[]): string {
  const ran = spawnSync(process.execPath, [TSC, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 240_000 });
  if (ran.error) throw ran.error;
  return `${ran.stdout}${ran.stderr}`;
}

/** Type-checks a program importing `specifiers` as an app with skipLibCheck off; its errors, one per line. */
function errorsOf(name: string, specifiers: string[]): string[] {
  const dir = join(out, name);
  mkdirSync(dir, { recursive: true });
  const source = specifiers.map(
    (specifier, i) => `import * as m${i} from '${specifier}';\nexport type M${i} = typeof m${i};\n`,
  );
  writeFileSync(join(dir, 'app.ts'), source.join(''));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2022', 'DOM'],
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        skipLibCheck: false,
        types: ['node'],
        noEmit: true,
      },
      files: ['app.ts'],
    }),
  );
  return tsc(['-p', join(dir, 'tsconfig.json')])
    .split('\n')
    .filter((line) => /error TS\d+/.test(line))
    .map((line) => line.replace(/^.*?node_modules\//, 'node_modules/'));
}

describe('published types with skipLibCheck: false', () => {
  beforeAll(() => {
    const build = join(ROOT, 'test/.build');
    mkdirSync(build, { recursive: true });
    out = mkdtempSync(join(build, 'published-types-'));
    const emitted = tsc([
      '-p',
      'src/tsconfig.build.json',
      '--outDir',
      out,
      '--emitDeclarationOnly',
      '--declarationMap',
      'false',
      '--sourceMap',
      'false',
    ]);
    expect(emitted).toBe('');
  }, 300_000);
  afterAll(() => {
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it("every entry point's declarations reach no typing error the SDKs' own entry points do not have", () => {
    const entryPoints = ENTRIES.map((entry) => `./${relative(join(out, 'entries'), join(out, 'src', entry))}.js`);
    const ours = errorsOf('entries', entryPoints);
    const theirs = new Set(errorsOf('dependencies', DEPENDENCY_ENTRIES));
    expect(ours.filter((error) => !theirs.has(error))).toEqual([]);

    // The check sees the fault it is for: the MCP SDK's Ajv provider, imported as our types once did.
    const ajv = errorsOf('ajv', ['@modelcontextprotocol/sdk/validation/ajv']);
    expect(ajv.filter((error) => !theirs.has(error)).join('\n')).toMatch(/ajv-provider\.d\.ts.*error TS2709/);
  }, 300_000);
});
