import type { ScriptEntry } from '../testing.js';
import { FIXED_PARSER, PARSER_PATH } from './workspace.js';

export const SYSTEM_PROMPT =
  'You are a coding assistant working in a small TypeScript repository. Use the tools to inspect files, ' +
  'search, run tests and edit files. Keep edits minimal and answer briefly when you are done.';

export const USER_PROMPT = 'The parser test fails on empty input. Find the bug and fix it.';

/** What the person watching "types" while the full test suite is still running. */
export const STEERING_MESSAGE =
  "Don't wait for the whole suite: fix the empty-input bug first, then run only the parser tests.";

/** The demo steers once the first full test run reaches this much progress. */
export const STEER_AT_PERCENT = 40;

export const FINAL_ANSWER = [
  'Fixed. `parseConfig` split empty input into one empty line, and `value.trim()` then threw on `undefined`.',
  'It now skips blank lines and defaults a missing value to "". The parser tests pass (2/2).',
].join('\n');

const usage = (input: number, output: number) => ({ input, output });

/** The scripted model's side of the session: one entry per model call, written to match the tools' replies. */
export const DEMO_SCRIPT: readonly ScriptEntry[] = [
  {
    delayMs: 70,
    thinking: 'Read the parser, find its callers, and see which tests fail.',
    text: "I'll read the parser, look for its callers and run the test suite in parallel.",
    toolCalls: [
      { id: 'call_read', name: 'read_file', arguments: { path: PARSER_PATH } },
      { id: 'call_grep', name: 'grep', arguments: { pattern: 'parseConfig', path: 'src' } },
      { id: 'call_tests', name: 'run_tests', arguments: {} },
    ],
    usage: usage(612, 88),
  },
  {
    delayMs: 70,
    text: '`value` is undefined for an empty line, so `value.trim()` throws. I will skip blank lines.',
    toolCalls: [{ id: 'call_write', name: 'write_file', arguments: { path: PARSER_PATH, content: FIXED_PARSER } }],
    usage: usage(1024, 176),
  },
  {
    delayMs: 50,
    text: 'Running only the parser tests.',
    toolCalls: [{ id: 'call_parser_tests', name: 'run_tests', arguments: { filter: 'parser' } }],
    usage: usage(1230, 24),
  },
  { delayMs: 60, text: FINAL_ANSWER, usage: usage(1290, 61) },
];
