import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SPECIFIER = /(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;
const PROVIDER_SDK = /^(openai|@anthropic-ai\/sdk|ai|@ai-sdk\/[^/]+)(\/|$)/;

/** Every package a source file reaches through its relative imports, with the file that imports it. */
function packagesReachedFrom(entry: string): Map<string, string> {
  const packages = new Map<string, string>();
  const seen = new Set<string>();
  const queue = [join(ROOT, entry)];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? match[3] ?? '';
      if (specifier.startsWith('.')) {
        const target = join(dirname(file), specifier.replace(/\.js$/, '.ts'));
        if (existsSync(target)) queue.push(target);
      } else if (!specifier.startsWith('node:')) {
        packages.set(specifier, relative(ROOT, file));
      }
    }
  }
  return packages;
}

const sdksReachedFrom = (entry: string) =>
  [...packagesReachedFrom(entry)].filter(([name]) => PROVIDER_SDK.test(name)).map(([name, file]) => `${name} (from ${file})`);

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
