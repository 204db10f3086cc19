import { z } from 'zod';
import { defineTool, type AnyTool } from '../index.js';
import type { Clock } from '../testing.js';
import type { Workspace } from './workspace.js';

/** What the demo tools report through `ctx.update`; the renderer prints it as `⚙ name 40% detail`. */
export interface DemoProgress {
  percent: number;
  detail?: string;
}

export function isDemoProgress(value: unknown): value is DemoProgress {
  return typeof value === 'object' && value !== null && typeof (value as DemoProgress).percent === 'number';
}

/** Step timings: small real delays so a person can watch, the whole demo still well under 3 s. */
export const TIMINGS = {
  readStepMs: 20,
  grepStepMs: 25,
  /** The full suite takes 10 steps; steering lands at 40%, so the grace period runs out first. */
  testStepMs: 45,
  writeMs: 30,
} as const;

const FULL_SUITE_TESTS = 30;
const PARSER_TESTS = 2;

/** Waits on the demo's clock; rejects when the call is cancelled, so a cancelled tool stops working. */
function pause(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('cancelled'));
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(new Error('cancelled'));
    };
    const timer = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export function demoTools(workspace: Workspace, clock: Clock): AnyTool[] {
  const readFile = defineTool({
    name: 'read_file',
    description: 'Read a file of the repository.',
    parameters: z.object({ path: z.string().describe('Path relative to the repository root') }),
    async execute({ path }, ctx) {
      const content = workspace.read(path);
      if (content === undefined)
        return { content: `No such file: ${path}. Files: ${workspace.paths().join(', ')}`, isError: true };
      for (const percent of [50, 100]) {
        await pause(clock, TIMINGS.readStepMs, ctx.signal);
        await ctx.update({
          percent,
          detail: `${Math.round((content.length * percent) / 100)}/${content.length} bytes`,
        });
      }
      return content;
    },
  });

  const grep = defineTool({
    name: 'grep',
    description: 'Search the repository for a literal string; returns path:line: text for each match.',
    parameters: z.object({
      pattern: z.string(),
      path: z.string().default('').describe('Only files under this folder'),
    }),
    async execute({ pattern, path }, ctx) {
      const files = workspace.paths().filter((candidate) => candidate.startsWith(path));
      for (let scanned = 1; scanned <= files.length; scanned++) {
        await pause(clock, TIMINGS.grepStepMs, ctx.signal);
        await ctx.update({
          percent: Math.round((scanned / files.length) * 100),
          detail: `${scanned}/${files.length} files`,
        });
      }
      const matches = workspace.grep(pattern, path);
      if (matches.length === 0) return `No matches for "${pattern}".`;
      return matches.map((match) => `${match.path}:${match.line}: ${match.text}`).join('\n');
    },
  });

  const runTests = defineTool({
    name: 'run_tests',
    description: 'Run the test suite, or only the test files whose name contains `filter`.',
    parameters: z.object({ filter: z.string().optional() }),
    async execute({ filter }, ctx) {
      const parserOnly = filter !== undefined && 'parser'.includes(filter.toLowerCase());
      const total = parserOnly ? PARSER_TESTS : FULL_SUITE_TESTS;
      const steps = parserOnly ? 2 : 10;
      for (let step = 1; step <= steps; step++) {
        await pause(clock, TIMINGS.testStepMs, ctx.signal);
        await ctx.update({
          percent: (step / steps) * 100,
          detail: `${Math.round((total * step) / steps)}/${total} tests`,
        });
      }
      if (workspace.parserFixed()) return `${total} passed, 0 failed`;
      return [
        `${total - 1} passed, 1 failed`,
        'FAIL test/parser.test.ts > parses empty input',
        "  TypeError: Cannot read properties of undefined (reading 'trim') at parseConfig (src/parser.ts:5)",
      ].join('\n');
    },
  });

  const writeFile = defineTool({
    name: 'write_file',
    description: 'Replace the whole content of a file. Asks the user for approval first.',
    parameters: z.object({ path: z.string(), content: z.string() }),
    requiresApproval: true,
    async execute({ path, content }, ctx) {
      await pause(clock, TIMINGS.writeMs, ctx.signal);
      workspace.write(path, content);
      return `Wrote ${content.split('\n').length} lines to ${path}.`;
    },
  });

  return [readFile, grep, runTests, writeFile];
}
