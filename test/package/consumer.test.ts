import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userEnv } from '../support/npm-env.js';
import { VIEWER_APP, viewInChromium } from './viewer-app.js';
import { asCommonJs, docPages, readDocPage } from '../docs/examples.js';

/**
 * The package as a user gets it: `npm pack` (its prepack builds dist/), the tarball installed into a
 * fresh app with the user's own zod 4.1 and none of the optional SDKs, then an ESM app and a
 * CommonJS app type-check and run the examples of README.md and docs/ marked `consumer` against it.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const USER_ZOD = 'zod@~4.1.0';
/** Where the viewer pages' screenshots go (docs/images/viewer.png is one of them, copied by hand). */
const SCREENSHOTS = join(ROOT, 'test/.build/screenshots');
const examples = docPages(ROOT)
  .flatMap((page) => readDocPage(ROOT, page).programs)
  .filter((program) => program.consumer)
  .map((program) => ({ ...program, name: program.id }));

let work: string;
let app: string;

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string): Ran {
  const ran = spawnSync(command, args, { cwd, encoding: 'utf8', env: userEnv(), timeout: 180_000 });
  return { status: ran.status, stdout: ran.stdout ?? '', stderr: ran.stderr ?? String(ran.error ?? '') };
}

function ok(command: string, args: string[], cwd: string): string {
  const ran = run(command, args, cwd);
  if (ran.status !== 0)
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited ${ran.status}:\n${ran.stdout}\n${ran.stderr}`);
  return ran.stdout;
}

const node = (args: string[], cwd: string) => run(process.execPath, args, cwd);
const typecheck = (project: string) => ok(process.execPath, [TSC, '-p', project], dirname(project));

function write(path: string, content: string | object): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`);
}

const STRICT = {
  target: 'ES2022',
  strict: true,
  lib: ['ES2022', 'DOM'],
  types: [],
  skipLibCheck: false,
  noEmitOnError: true,
};

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'agentchart-consumer-'));
  ok('npm', ['pack', '--pack-destination', work, '--loglevel=error'], ROOT);
  const tarball = readdirSync(work).find((file) => file.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball to ${work}`);
  app = join(work, 'app');
  write(join(app, 'package.json'), { name: 'consumer-app', version: '1.0.0', private: true });
  // --prefer-offline: the npm cache the repository's own install filled serves all but the user's zod.
  ok(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', join(work, tarball), USER_ZOD],
    app,
  );
}, 240_000);

// Two installed apps (one with every optional SDK) take a while to delete on a busy machine.
afterAll(() => {
  if (work && !process.env.KEEP_CONSUMER_APPS) rmSync(work, { recursive: true, force: true });
}, 120_000);

describe('the examples run from the package', () => {
  it('are marked and say what they print', () => {
    expect(examples.length).toBeGreaterThanOrEqual(3);
    for (const example of examples) expect(example.expectedLines.length, example.name).toBeGreaterThan(0);
  });
});

describe('the packed tarball', () => {
  it('ships a LICENSE and the files its source maps point at, and nothing of the demo or the tests', () => {
    const installed = join(app, 'node_modules/agentchart');
    expect(existsSync(join(installed, 'LICENSE'))).toBe(true);
    expect(existsSync(join(installed, 'test'))).toBe(false);
    expect(existsSync(join(installed, 'src/demo'))).toBe(false);
    const maps = listFiles(join(installed, 'dist')).filter((file) => file.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(50);
    const missing = maps.flatMap((map) => {
      const { sources } = JSON.parse(readFileSync(map, 'utf8')) as { sources: string[] };
      return sources.map((source) => resolve(dirname(map), source)).filter((source) => !existsSync(source));
    });
    expect(missing).toEqual([]);
  });

  it("was installed with the user's own zod 4.1 and none of the optional SDKs", () => {
    const version = (pkg: string) =>
      (JSON.parse(readFileSync(join(app, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
    expect(version('zod')).toMatch(/^4\.1\./);
    expect(existsSync(join(app, 'node_modules/agentchart/node_modules/zod'))).toBe(false);
    const optionalPeers = ['openai', '@anthropic-ai/sdk', '@ai-sdk/provider', 'ai', '@statelyai/inspect'];
    for (const sdk of [...optionalPeers, '@modelcontextprotocol/sdk', '@opentelemetry/api', 'fast-check']) {
      expect(existsSync(join(app, 'node_modules', sdk)), sdk).toBe(false);
    }
  });
});

describe('an ESM app', () => {
  let esm: string;
  beforeAll(() => {
    esm = join(app, 'esm');
    write(join(esm, 'package.json'), { type: 'module' });
    for (const example of examples) write(join(esm, 'src', `${example.name}.ts`), example.code);
    write(join(esm, 'src/zod-entry-points.ts'), ZOD_ENTRY_POINTS);
    const compilerOptions = { ...STRICT, rootDir: 'src', outDir: 'out' };
    write(join(esm, 'tsconfig.nodenext.json'), {
      compilerOptions: { ...compilerOptions, module: 'nodenext', moduleResolution: 'nodenext' },
      include: ['src'],
    });
    write(join(esm, 'tsconfig.bundler.json'), {
      compilerOptions: { ...compilerOptions, module: 'esnext', moduleResolution: 'bundler', noEmit: true },
      include: ['src'],
    });
  });

  it('type-checks with moduleResolution bundler', () => {
    typecheck(join(esm, 'tsconfig.bundler.json'));
  }, 120_000);

  it('type-checks with moduleResolution nodenext and runs each example, printing what it says', () => {
    typecheck(join(esm, 'tsconfig.nodenext.json'));
    expectPrinted(esm, [...examples, { name: 'zod-entry-points', expectedLines: ZOD_ENTRY_POINTS_PRINTS }]);
  }, 120_000);

  it("writes viewer pages (a run's trace, a counterexample) that show the diagrams shipped in the package", async () => {
    write(join(esm, 'viewer.mjs'), VIEWER_APP);
    const ran = node(['viewer.mjs'], esm);
    expect([ran.status, ran.stderr, ran.stdout.trim()]).toEqual([0, '', 'written']);
    mkdirSync(SCREENSHOTS, { recursive: true });
    for (const name of ['run', 'counterexample']) {
      const seen = await viewInChromium(join(esm, `${name}.html`), join(SCREENSHOTS, `viewer-${name}.png`));
      for (const machine of ['master', 'turn', 'toolCall'])
        expect(seen.diagramNodes[machine], `${name}: ${machine}`).toBeGreaterThan(5);
      expect(seen.activeAtEnd.master).toEqual(['master.ended']);
      expect(seen.strayTicks).toBe(0);
      expect(seen.requests.filter((url) => !url.startsWith('file://'))).toEqual([]);
      expect(seen.pageErrors).toEqual([]);
    }
  }, 120_000);

  it('gets MissingDependency naming the package and the install command for each missing optional SDK', () => {
    write(join(esm, 'missing.mjs'), MISSING_SDKS);
    const ran = node(['missing.mjs'], esm);
    expect([ran.status, ran.stderr]).toEqual([0, '']);
    expect(JSON.parse(ran.stdout)).toEqual({
      openai:
        'MissingDependency: agentchart/openai needs the optional peer dependency "openai" (^6 || ^7), which is not installed. ' +
        'Install it with: npm install openai',
      anthropic:
        'MissingDependency: agentchart/anthropic needs the optional peer dependency "@anthropic-ai/sdk" (^1), which is not ' +
        'installed. Install it with: npm install @anthropic-ai/sdk',
      inspect:
        'MissingDependency: startInspector (agentchart/inspect) needs the optional peer dependency "@statelyai/inspect" (>=0.7), ' +
        'which is not installed. Install it with: npm install @statelyai/inspect',
      mcp:
        'MissingDependency: agentchart/mcp needs the optional peer dependency "@modelcontextprotocol/sdk" (1.x), ' +
        'which is not installed. Install it with: npm install @modelcontextprotocol/sdk',
      otel:
        'MissingDependency: agentchart/otel needs the optional peer dependency "@opentelemetry/api" (^1.9.0), ' +
        'which is not installed. Install it with: npm install @opentelemetry/api',
      'fast-check':
        'MissingDependency: raceAgent (agentchart/testing) needs the optional peer dependency "fast-check" (^4.2.0), ' +
        'which is not installed. Install it with: npm install fast-check',
      // The AI SDK adapter loads nothing of the AI SDK: the language model it wraps is the user's.
      'ai-sdk': expect.stringMatching(/^InvalidOptions: fromAISDK needs a LanguageModelV3 or LanguageModelV4/),
      'ai-sdk-ui':
        'MissingDependency: agentchart/ai-sdk-ui needs the optional peer dependency "ai" (^6 || ^7), which is not ' +
        'installed. Install it with: npm install ai',
    });
  });

  it('gets MissingDependency from sqliteStore on a Node without node:sqlite', (context) => {
    write(join(esm, 'hide-sqlite.mjs'), HIDE_SQLITE);
    write(join(esm, 'sqlite.mjs'), SQLITE_STORE);
    const present = node(['sqlite.mjs'], esm);
    expect([present.status, present.stdout.trim()]).toEqual([0, 'opened']);
    if (typeof (nodeModule as { registerHooks?: unknown }).registerHooks !== 'function') {
      const why = `Node ${process.version} has no module.registerHooks (22.15+)`;
      console.warn(`[consumer test] SKIPPED the missing node:sqlite case: ${why}`);
      context.skip(why);
    }
    const hidden = node(['--import', './hide-sqlite.mjs', 'sqlite.mjs'], esm);
    expect([hidden.status, hidden.stderr]).toEqual([0, '']);
    expect(hidden.stdout.trim()).toMatch(/^MissingDependency: sqliteStore needs node:sqlite/);
  });
});

describe('a CommonJS app', () => {
  let cjs: string;
  beforeAll(() => {
    cjs = join(app, 'cjs');
    write(join(cjs, 'package.json'), { type: 'commonjs' });
    for (const example of examples) write(join(cjs, 'src', `${example.name}.ts`), asCommonJs(example.code));
    write(join(cjs, 'tsconfig.json'), {
      compilerOptions: { ...STRICT, module: 'nodenext', moduleResolution: 'nodenext', rootDir: 'src', outDir: 'out' },
      include: ['src'],
    });
  });

  it('type-checks and runs each example through require()', () => {
    typecheck(join(cjs, 'tsconfig.json'));
    for (const example of examples)
      expect(readFileSync(join(cjs, 'out', `${example.name}.js`), 'utf8')).toContain('require("agentchart');
    expectPrinted(cjs, examples);
  }, 120_000);

  // All but agentchart/restate: it loads Restate's SDK with a top-level await (one copy of the SDK, the
  // application's), so it is import()-only.
  it('require()s every other entry point; a missing SDK is MissingDependency there too', () => {
    write(join(cjs, 'require-all.cjs'), REQUIRE_ALL);
    const ran = node(['require-all.cjs'], cjs);
    expect([ran.status, ran.stderr]).toEqual([0, '']);
    expect(JSON.parse(ran.stdout)).toEqual({
      agentchart: ['createAgent', 'defineTool', 'memoryStore'],
      'agentchart/testing': ['checkInvariants', 'exploreAgent', 'raceAgent', 'scriptedModel'],
      'agentchart/openai': ['openAICompatible'],
      'agentchart/anthropic': ['anthropic'],
      'agentchart/ai-sdk': ['fromAISDK'],
      'agentchart/ai-sdk-ui': ['chatHandler', 'toUIMessageStream', 'toUIMessageStreamResponse'],
      'agentchart/sqlite': ['sqliteStore'],
      'agentchart/inspect': ['recordTrace', 'startInspector'],
      'agentchart/mcp': ['mcpTools'],
      'agentchart/otel': ['otelObserver'],
      'agentchart/store-kit': ['acquireLease', 'checkStep'],
      'agentchart/trace': ['createTraceRecorder', 'viewerHtml'],
      'agentchart/model-kit': ['StreamAccumulator', 'prepareToolCall'],
      'agentchart/postgres': ['postgresStore'],
      openAICompatible: 'MissingDependency',
    });
  });
});

/**
 * Every entry point's published types compile with `skipLibCheck: false` (many projects turn it
 * off): our .d.ts files must import nothing whose own typings fail, and an entry point's types must
 * need no optional SDK but the one it is about. Entry points come from package.json's exports.
 */
describe("every entry point's published types, with skipLibCheck: false", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, unknown>;
    peerDependencies: Record<string, string>;
  };
  const entries = Object.keys(pkg.exports).map((subpath) => ({
    file: subpath === '.' ? 'index' : subpath.slice(2),
    specifier: subpath === '.' ? 'agentchart' : `agentchart/${subpath.slice(2)}`,
  }));
  /** The packages an entry point's types need: the SDK it adapts (or Node's own types). */
  const TYPES_NEED: Record<string, string[]> = {
    openai: ['openai'],
    anthropic: ['@anthropic-ai/sdk'],
    'ai-sdk': ['@ai-sdk/provider'],
    'ai-sdk-ui': ['ai'],
    otel: ['@opentelemetry/api'],
    restate: ['@restatedev/restate-sdk'],
    mcp: ['@types/node'],
    sqlite: ['@types/node'],
    // A local HTTP server: node:http in its types.
    studio: ['@types/node'],
  };
  const importing = (specifiers: string[]) =>
    specifiers
      .map(
        (specifier, i) => `import * as entry${i} from '${specifier}';
export type Entry${i} = typeof entry${i};
`,
      )
      .join('');

  it('with none of the optional SDKs, the entry points that need none compile', () => {
    const dir = join(app, 'types-bare');
    const needNothing = entries.filter((entry) => TYPES_NEED[entry.file] === undefined);
    expect(needNothing.map((entry) => entry.specifier)).toContain('agentchart');
    write(join(dir, 'src/entries.ts'), importing(needNothing.map((entry) => entry.specifier)));
    write(join(dir, 'tsconfig.json'), {
      compilerOptions: { ...STRICT, module: 'nodenext', moduleResolution: 'nodenext', noEmit: true },
      include: ['src'],
    });
    typecheck(join(dir, 'tsconfig.json'));
  }, 120_000);

  it('with every optional SDK installed, every entry point compiles (nodenext and bundler resolution)', () => {
    const full = join(work, 'full-app');
    write(join(full, 'package.json'), { name: 'consumer-full', version: '1.0.0', private: true, type: 'module' });
    // The versions the repository itself installed (served by the npm cache), for every peer, plus
    // Node's types and those the peers' own typings import (pg's; json-schema's for @ai-sdk/provider,
    // which an AI SDK user with skipLibCheck off installs too).
    const installed = (name: string) =>
      (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
        .version;
    const peers = [...Object.keys(pkg.peerDependencies).filter((name) => name !== 'zod'), '@types/node', '@types/pg'];
    const tarball = readdirSync(work).find((file) => file.endsWith('.tgz')) as string;
    ok(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        join(work, tarball),
        USER_ZOD,
        '@types/json-schema@^7.0.15',
        ...peers.map((name) => `${name}@${installed(name)}`),
      ],
      full,
    );
    write(join(full, 'src/entries.ts'), importing(entries.map((entry) => entry.specifier)));
    const compilerOptions = { ...STRICT, types: ['node'], noEmit: true };
    write(join(full, 'tsconfig.nodenext.json'), {
      compilerOptions: { ...compilerOptions, module: 'nodenext', moduleResolution: 'nodenext' },
      include: ['src'],
    });
    write(join(full, 'tsconfig.bundler.json'), {
      compilerOptions: { ...compilerOptions, module: 'esnext', moduleResolution: 'bundler' },
      include: ['src'],
    });
    typecheck(join(full, 'tsconfig.nodenext.json'));
    typecheck(join(full, 'tsconfig.bundler.json'));
  }, 300_000);
});

/** Runs each compiled example (`out/<name>.js`): exit 0, nothing on stderr, every line it says it prints. */
function expectPrinted(
  appDir: string,
  programs: ReadonlyArray<{ name: string; expectedLines: string[]; output?: string | null }>,
): void {
  for (const { name, expectedLines, output } of programs) {
    const ran = node([join('out', `${name}.js`)], appDir);
    expect([name, ran.status, ran.stderr]).toEqual([name, 0, '']);
    expect(ran.stdout.split('\n')).toEqual(expect.arrayContaining(expectedLines));
    if (output) expect(ran.stdout).toContain(output);
  }
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** The user's own zod 4.1 through each of its entry points, as tool parameters with typed arguments. */
const ZOD_ENTRY_POINTS = `import { createAgent, defineTool } from 'agentchart';
import { createToolRegistry } from 'agentchart/model-kit';
import { scriptedModel } from 'agentchart/testing';
import { z } from 'zod';
import { z as z4 } from 'zod/v4';
import * as zm from 'zod/mini';

const viaZod = defineTool({
  name: 'a', description: 'zod', parameters: z.object({ n: z.number().default(1) }),
  execute: (args) => { const n: number = args.n; return String(n); },
});
const viaV4 = defineTool({
  name: 'b', description: 'zod/v4', parameters: z4.object({ s: z4.string() }),
  execute: (args) => { const s: string = args.s; return s; },
});
const viaMini = defineTool({
  name: 'c', description: 'zod/mini', parameters: zm.object({ flag: zm.boolean() }),
  execute: (args) => { const flag: boolean = args.flag; return String(flag); },
});
const tools = [viaZod, viaV4, viaMini];
console.log(JSON.stringify(createToolRegistry(tools).specs().map((spec) => spec.parameters.properties)));

const model = scriptedModel([
  { toolCalls: [{ name: 'a' }, { name: 'b', arguments: { s: 'x' } }, { name: 'c', arguments: { flag: 1 } }] },
  { text: 'done' },
]);
const result = await createAgent({ model, tools }).prompt('go').result;
console.log(result.messages.flatMap((m) => (m.role === 'toolResult' ? [m.content] : [])).join(' | '));
`;
const ZOD_ENTRY_POINTS_PRINTS = [
  '[{"n":{"default":1,"type":"number"}},{"s":{"type":"string"}},{"flag":{"type":"boolean"}}]',
  '1 | x | Invalid arguments for tool "c": flag: expected boolean, received number',
];

const MISSING_SDKS = `import { AgentError } from 'agentchart';
const results = {};
async function attempt(name, use) {
  try {
    await use();
    results[name] = 'no error';
  } catch (error) {
    const kind = error instanceof AgentError ? error.code : error?.name;
    results[name] = \`\${kind}: \${error?.message}\`;
  }
}
const { openAICompatible } = await import('agentchart/openai');
const { anthropic } = await import('agentchart/anthropic');
await attempt('openai', () => openAICompatible({ model: 'gpt-4o-mini', apiKey: 'k' }));
await attempt('anthropic', () => anthropic({ model: 'claude-haiku-4-5', apiKey: 'k' }));
await attempt('inspect', async () => (await import('agentchart/inspect')).startInspector());
await attempt('ai-sdk', async () => (await import('agentchart/ai-sdk')).fromAISDK({}));
const { scriptedModel: script } = await import('agentchart/testing');
const { createAgent } = await import('agentchart');
const uiRun = createAgent({ model: script([{ text: 'hi' }]) }).prompt('hi');
await attempt('ai-sdk-ui', async () => (await import('agentchart/ai-sdk-ui')).toUIMessageStream(uiRun));
await attempt('mcp', async () => (await import('agentchart/mcp')).mcpTools({ command: 'never-started' }));
await attempt('otel', async () => (await import('agentchart/otel')).otelObserver());
const { raceAgent, scriptedModel } = await import('agentchart/testing');
await attempt('fast-check', () => raceAgent({ model: scriptedModel([]) }, { replies: [{ text: 'hi' }], runs: 1 }));
console.log(JSON.stringify(results));
`;

/** Stands in for a Node without node:sqlite (before 22.13): resolving it fails as it does there. */
const HIDE_SQLITE = `import { registerHooks } from 'node:module';
registerHooks({
  resolve(specifier, context, next) {
    if (specifier === 'node:sqlite') {
      throw Object.assign(new Error('No such built-in module: node:sqlite'), { code: 'ERR_UNKNOWN_BUILTIN_MODULE' });
    }
    return next(specifier, context);
  },
});
`;

const SQLITE_STORE = `import { sqliteStore } from 'agentchart/sqlite';
try {
  sqliteStore(':memory:').close?.();
  console.log('opened');
} catch (error) {
  console.log(\`\${error.code}: \${error.message}\`);
}
`;

const REQUIRE_ALL = `const subpaths = ['', '/testing', '/openai', '/anthropic', '/ai-sdk', '/ai-sdk-ui', '/sqlite', '/inspect', '/mcp', '/otel',
  '/store-kit', '/trace', '/model-kit', '/postgres'];
const entries = subpaths.map((subpath) => 'agentchart' + subpath);
const wanted = ['createAgent', 'defineTool', 'memoryStore', 'checkInvariants', 'scriptedModel', 'exploreAgent', 'raceAgent', 'openAICompatible',
  'anthropic', 'fromAISDK', 'toUIMessageStream', 'toUIMessageStreamResponse', 'chatHandler', 'sqliteStore', 'recordTrace', 'startInspector',
  'mcpTools', 'otelObserver', 'checkStep', 'acquireLease', 'createTraceRecorder', 'viewerHtml', 'StreamAccumulator', 'prepareToolCall',
  'postgresStore'];
const out = {};
for (const entry of entries) {
  const exported = require(entry);
  out[entry] = wanted.filter((name) => typeof exported[name] === 'function').sort();
}
try {
  require('agentchart/openai').openAICompatible({ model: 'gpt-4o-mini', apiKey: 'k' });
  out.openAICompatible = 'no error';
} catch (error) {
  out.openAICompatible = error.code;
}
console.log(JSON.stringify(out));
`;
