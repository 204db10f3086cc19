import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AgentError } from 'agentchart';
import { assertInstalled, lazyPackage } from '../../src/peers/optional-sdk.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SPECIFIER =
  /(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;
const PROVIDER_SDK = /^(openai|@anthropic-ai\/sdk|ai|@ai-sdk\/[^/]+)(\/|$)/;
const { peerDependenciesMeta } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const OPTIONAL_PEERS = Object.keys(peerDependenciesMeta).filter((name) => peerDependenciesMeta[name]?.optional);
const isOptionalPeer = (specifier: string) =>
  OPTIONAL_PEERS.some((name) => specifier === name || specifier.startsWith(`${name}/`));
/** A static import or re-export that loads its module (`import type` / `export type` load nothing). */
const LOADING_IMPORT =
  /^\s*(?:import|export)\s+(?!type\b)[^'";]*?from\s*['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm;
/** Every entry point: `src/<name>.ts`. */
const ENTRIES = readdirSync(join(ROOT, 'src'))
  .filter((file) => file.endsWith('.ts'))
  .map((file) => `src/${file}`);

/** Every source file an entry reaches through its relative imports. */
function filesReachedFrom(entry: string): string[] {
  const seen = new Set<string>();
  const queue = [join(ROOT, entry)];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? match[3] ?? '';
      const target = join(dirname(file), specifier.replace(/\.js$/, '.ts'));
      if (specifier.startsWith('.') && existsSync(target)) queue.push(target);
    }
  }
  return [...seen];
}

/** Every package a source file reaches through its relative imports, with the file that imports it. */
function packagesReachedFrom(entry: string): Map<string, string> {
  const packages = new Map<string, string>();
  for (const file of filesReachedFrom(entry)) {
    for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? match[3] ?? '';
      if (!specifier.startsWith('.') && !specifier.startsWith('node:')) packages.set(specifier, relative(ROOT, file));
    }
  }
  return packages;
}

const sdksReachedFrom = (entry: string) =>
  [...packagesReachedFrom(entry)]
    .filter(([name]) => PROVIDER_SDK.test(name))
    .map(([name, file]) => `${name} (from ${file})`);

describe('provider SDKs stay optional', () => {
  it('the core and the testing entry never reach a provider SDK', () => {
    expect(sdksReachedFrom('src/index.ts')).toEqual([]);
    expect(sdksReachedFrom('src/testing.ts')).toEqual([]);
  });

  it('each subpath entry reaches only its own SDK', () => {
    expect(sdksReachedFrom('src/openai.ts')).toEqual(['openai (from src/model/openai.ts)']);
    expect(sdksReachedFrom('src/anthropic.ts')).toEqual(['@anthropic-ai/sdk (from src/model/anthropic.ts)']);
    expect(sdksReachedFrom('src/ai-sdk.ts')).toEqual(['@ai-sdk/provider (from src/model/ai-sdk.ts)']);
  });
});

describe('a missing optional peer is a typed error, not ERR_MODULE_NOT_FOUND at import', () => {
  it.each(ENTRIES)('%s loads no optional peer statically (they are loaded at first use)', (entry) => {
    const loading = filesReachedFrom(entry).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(LOADING_IMPORT)]
        .map((match) => match[1] ?? match[2] ?? '')
        .filter(isOptionalPeer)
        .map((specifier) => `${specifier} (from ${relative(ROOT, file)})`),
    );
    expect(loading).toEqual([]);
  });

  const NOT_INSTALLED = { name: 'agentchart-not-installed-anywhere', range: '^1', neededBy: 'agentchart/example' };
  const MESSAGE =
    'agentchart/example needs the optional peer dependency "agentchart-not-installed-anywhere" (^1), ' +
    'which is not installed. ' +
    'Install it with: npm install agentchart-not-installed-anywhere';

  it('an adapter whose package cannot be resolved throws MissingDependency naming it and the install command', () => {
    expect(() => assertInstalled(NOT_INSTALLED)).toThrow(new AgentError('MissingDependency', MESSAGE));
    expect(() => assertInstalled({ ...NOT_INSTALLED, name: 'zod' })).not.toThrow();
  });

  it('a package that fails to load at first use is MissingDependency too, and the next use tries again', async () => {
    let attempts = 0;
    const load = lazyPackage(NOT_INSTALLED, async () => {
      attempts += 1;
      return (await import(/* @vite-ignore */ NOT_INSTALLED.name)) as unknown;
    });
    const first = await load().catch((error: unknown) => error);
    expect(first).toBeInstanceOf(AgentError);
    expect(first).toMatchObject({ code: 'MissingDependency', message: MESSAGE });
    await expect(load()).rejects.toMatchObject({ code: 'MissingDependency' });
    expect(attempts).toBe(2);
  });
});
