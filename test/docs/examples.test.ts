import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PostgresServer } from '../support/postgres.js';
import { docPages, readDocPage, withOutput, type DocPage, type DocProgram } from './examples.js';

/**
 * Every ```ts block of README.md and docs/*.md, type-checked under `strict` and run as its own Node
 * process, the way a reader would paste it into a file (test/docs/examples.ts says how a block is marked
 * compile-only, continued or shared). A program must exit 0, print nothing on stderr (no warning either:
 * an "unsettled top-level await" is a failure) and print every line it says it prints.
 * Imports of `agentchart/*` are served by this repository's sources; test/package/consumer.test.ts runs
 * the blocks marked `consumer` again from the packed tarball.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILD = join(ROOT, 'test/.build/docs-examples');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const pages: DocPage[] = docPages(ROOT).map((page) => readDocPage(ROOT, page));
const programs = pages.flatMap((page) => page.programs);

/** Where each program's source is written: one folder per page, so a page's modules sit beside its programs. */
const sourceOf = (program: { page: string; id: string; extension: string }) =>
  join(BUILD, 'src', pageFolder(program.page), `${program.id}${program.extension}`);
const pageFolder = (page: string) => page.replace(/\.md$/, '').replace(/[^\w]+/g, '-');

let typeErrors = '';
let postgres: PostgresServer | { skipped: string } | null = null;

beforeAll(async () => {
  rmSync(BUILD, { recursive: true, force: true });
  write(join(BUILD, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  write(
    join(BUILD, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        lib: ['ES2022', 'DOM'],
        strict: true,
        types: ['node'],
        jsx: 'react-jsx',
        skipLibCheck: true,
        noEmit: true,
        paths: { agentchart: ['../../../src/index.ts'], 'agentchart/*': ['../../../src/*.ts'] },
      },
      include: ['src'],
    }),
  );
  for (const page of pages) {
    for (const [file, code] of page.files) write(join(BUILD, 'src', pageFolder(page.page), file), code);
    for (const program of page.programs) write(sourceOf(program), program.code);
  }
  const runnable = programs.filter((program) => !program.compileOnly);
  const [checked] = await Promise.all([
    exec(process.execPath, [TSC, '-p', join(BUILD, 'tsconfig.json')], BUILD, process.env),
    build({
      entryPoints: runnable.map((program) => ({ in: sourceOf(program), out: program.id })),
      outdir: join(BUILD, 'out'),
      outExtension: { '.js': '.mjs' },
      bundle: true,
      splitting: true,
      chunkNames: 'chunks/[name]-[hash]',
      format: 'esm',
      platform: 'node',
      target: 'node22',
      plugins: [agentchartFromSource],
      logLevel: 'warning',
    }),
  ]);
  typeErrors = checked.stdout + checked.stderr;
  if (programs.some((program) => program.needs.includes('postgres'))) {
    const started = await startPostgres();
    postgres = 'server' in started ? started.server : started;
  }
}, 240_000);

afterAll(() => {
  if (postgres && 'stop' in postgres) postgres.stop();
});

describe('the code blocks of README.md and docs/', () => {
  it('are found in README.md and in docs/', () => {
    expect(pages.map((page) => page.page)).toContain('README.md');
    expect(programs.filter((program) => program.page === 'README.md').length).toBeGreaterThan(0);
    expect(programs.filter((program) => program.page.startsWith('docs/')).length).toBeGreaterThan(0);
  });

  describe.each(pages.filter((page) => page.programs.length > 0).map((page) => [page.page, page] as const))(
    '%s',
    (_, page) => {
      it.concurrent.for(page.programs.map((program) => [`${program.name} (line ${program.line})`, program] as const))(
        '%s',
        async ([, program], { expect, skip }) => {
          const file = sourceOf(program).slice(BUILD.length + 1);
          const errors = typeErrors.split('\n').filter((line) => line.startsWith(file) || line.includes(`/${file}(`));
          expect(errors, `type errors in ${program.page}, the block at line ${program.line}`).toEqual([]);
          if (program.compileOnly) return;
          const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: tmpdir() };
          if (program.needs.includes('postgres')) {
            if (postgres === null || !('connectionString' in postgres)) {
              console.warn(`[docs examples] SKIPPED ${program.page}:${program.line}: ${postgres?.skipped}`);
              return skip(`PostgreSQL: ${postgres?.skipped}`);
            }
            env.DATABASE_URL = postgres.connectionString;
          }
          const ran = await runProgram(program, env);
          expect([ran.code, ran.stderr], `${program.page}, the block at line ${program.line}`).toEqual([0, '']);
          const printed = ran.stdout.split('\n');
          expect(printed).toEqual(expect.arrayContaining(program.expectedLines));
          if (program.output === null) return;
          const output = unclaimedOutput(program, ran.stdout);
          // After a deliberate change: AGENTCHART_UPDATE_DOCS=1 writes what the program printed into its page.
          if (process.env.AGENTCHART_UPDATE_DOCS && output !== program.output) {
            const path = join(ROOT, program.page);
            writeFileSync(path, withOutput(readFileSync(path, 'utf8'), program.name, output));
          }
          expect(output, `the example-output block of ${program.name} in ${program.page}`).toBe(program.output);
        },
      );
    },
  );
});

/** What a program prints besides the lines its comments claim: the text of its `example-output` block. */
function unclaimedOutput(program: DocProgram, stdout: string): string {
  const claimed = new Set(program.expectedLines);
  return stdout
    .split('\n')
    .filter((line) => !claimed.has(line))
    .join('\n')
    .trimEnd();
}

/** `agentchart` and its subpaths from src/ (as the tsconfig paths say); every other package from node_modules. */
const agentchartFromSource: Plugin = {
  name: 'agentchart-from-source',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^agentchart(\/[\w-]+)?$/ }, ({ path }) => ({
      path: join(ROOT, 'src', `${path === 'agentchart' ? 'index' : path.slice('agentchart/'.length)}.ts`),
    }));
    esbuild.onResolve({ filter: /^[^./]/ }, ({ path }) => ({ path, external: true }));
  },
};

/** Two programs at a time: the machine is shared. */
let running = 0;
const waiting: Array<() => void> = [];
async function runProgram(program: DocProgram, env: NodeJS.ProcessEnv) {
  while (running >= 2) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  const cwd = mkdtempSync(join(tmpdir(), `agentchart-doc-${program.id.slice(0, 40)}-`));
  try {
    return await exec(process.execPath, [join(BUILD, 'out', `${program.id}.mjs`)], cwd, env, 90_000);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
    running--;
    waiting.shift()?.();
  }
}

function exec(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 180_000) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function write(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content.endsWith('\n') ? content : `${content}\n`);
}
