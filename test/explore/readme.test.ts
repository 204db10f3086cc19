import { readFileSync, writeFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as agentchart from 'agentchart';
import * as testing from 'agentchart/testing';
import * as zod from 'zod';
import { readmeExamples, readmeOutputs } from '../package/readme-examples.js';

/**
 * The README's model-checking example, run here as it is written (its imports served by this
 * repository's sources): what it prints must be what the README shows, so the printed
 * counterexample cannot go stale. (test/package/consumer.test.ts runs it again from the packed tarball.)
 */

const README_URL = new URL('../../README.md', import.meta.url);
const README = readFileSync(README_URL, 'utf8');
const MODULES: Record<string, unknown> = { agentchart, 'agentchart/testing': testing, zod };

/** Runs a README example (TypeScript with top-level await) and returns what it printed. */
async function printedBy(code: string): Promise<string> {
  const lines = code.split('\n');
  const imports = lines.filter((line) => line.startsWith('import '));
  const body = lines.filter((line) => !line.startsWith('import '));
  const source = [...imports, 'module.exports = (async () => {', ...body, '})();'].join('\n');
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const printed: string[] = [];
  const module = { exports: {} as unknown };
  const require = (name: string) => {
    if (!(name in MODULES)) throw new Error(`the README example imports ${name}, which this test does not serve`);
    return MODULES[name];
  };
  const console = { log: (...args: unknown[]) => printed.push(args.map(String).join(' ')) };
  new Function('require', 'module', 'exports', 'console', js)(require, module, module.exports, console);
  await module.exports;
  return printed.join('\n');
}

describe('README: model-check your agent', () => {
  const example = readmeExamples(README).find((e) => e.name === 'model-check');
  const output = readmeOutputs(README).get('model-check');

  it("proves the approval property, then prints the broken variant's counterexample exactly as the README shows it", async () => {
    expect(example && output).toBeTruthy();
    const printed = await printedBy(example!.code);
    const [first, ...rest] = printed.split('\n');
    // After a deliberate change: AGENTCHART_UPDATE_README=1 writes what it prints into the README.
    if (process.env.AGENTCHART_UPDATE_README && rest.join('\n') !== output) {
      const marker = '<!-- readme-output: model-check -->\n```text\n';
      writeFileSync(README_URL, README.replace(`${marker}${output}\n`, `${marker}${rest.join('\n')}\n`));
    }
    expect(example!.expectedLines).toEqual([first]);
    expect(rest.join('\n')).toBe(output);
  }, 60_000);
});
