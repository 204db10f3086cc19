import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zeroCounters } from 'agentchart/model-kit';
import { eventTypes } from 'agentchart/testing';
import {
  chooseProvider,
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULT_OPENAI_MODEL,
  describeChoice,
  loadProviderModel,
} from '../../src/demo/provider.js';
import { counterRows } from '../../src/demo/renderer.js';
import { runDemo, type DemoOutcome } from '../../src/demo/run-demo.js';
import { FINAL_ANSWER, STEERING_MESSAGE, USER_PROMPT } from '../../src/demo/script.js';
import { ProtocolServer, sse } from '../adapters/protocol-server.js';
import { openAIWire } from '../adapters/openai-wire.js';
import { sseText } from '../adapters/wire.js';

const CANCELLED_BY_STEERING = 'cancelled: steering (the user sent a new message; this call was interrupted)';

async function demo(tty = false): Promise<{ outcome: DemoOutcome; transcript: string }> {
  let transcript = '';
  const outcome = await runDemo({ write: (text) => (transcript += text), tty });
  return { outcome, transcript };
}

describe('npm run demo (offline, scripted model)', () => {
  let outcome: DemoOutcome;
  let transcript: string;
  let lines: string[];
  beforeAll(async () => {
    ({ outcome, transcript } = await demo());
    lines = transcript.split('\n');
  });

  it('completes naturally, the invariants hold, and it takes well under 3 s', () => {
    expect(outcome.result.status).toBe('completed');
    expect(outcome.result.endReason).toBe('naturalEnd');
    expect(outcome.violations).toEqual([]);
    expect(outcome.elapsedMs).toBeLessThan(3000);
  });

  it('delivers the steering message as the input of turn 1', () => {
    expect(outcome.steering).toEqual({ status: 'delivered', turnIndex: 1 });
  });

  it('counts exactly what the session did', () => {
    expect(outcome.result.counters).toEqual({
      ...zeroCounters(),
      turns: 4,
      modelCalls: 4,
      toolCallsRequested: 5,
      toolCallsExecuted: 5,
      toolCallsFailed: 1,
      steeringDelivered: 1,
      approvalsRequested: 1,
      tokensIn: 612 + 1024 + 1230 + 1290,
      tokensOut: 88 + 176 + 24 + 61,
    });
  });

  it("gives the model the prompt first and the steering message as the next turn's input", () => {
    const calls = outcome.events.flatMap((event) => (event.type === 'beforeModelCall' ? [event] : []));
    expect(calls.map((call) => [call.turnIndex, call.messages.length])).toEqual([
      [0, 1],
      [1, 6],
      [2, 8],
      [3, 10],
    ]);
    expect(calls[0]?.messages).toEqual([{ role: 'user', content: USER_PROMPT }]);
    expect(calls[1]?.messages.at(-1)).toEqual({ role: 'user', content: STEERING_MESSAGE });
    expect(lines.filter((line) => line.startsWith('  ⋯ calling'))).toEqual([
      '  ⋯ calling scripted-coder with 1 message',
      '  ⋯ calling scripted-coder with 6 messages',
      '  ⋯ calling scripted-coder with 8 messages',
      '  ⋯ calling scripted-coder with 10 messages',
    ]);
  });

  it('runs the three first tools in parallel: all start before any ends', () => {
    const turn0 = outcome.events.filter((event) => event.turnIndex === 0);
    const toolEvents = eventTypes(turn0).filter((type) => type === 'toolExecutionStart' || type === 'toolExecutionEnd');
    expect(toolEvents).toEqual([
      'toolExecutionStart',
      'toolExecutionStart',
      'toolExecutionStart',
      'toolExecutionEnd',
      'toolExecutionEnd',
      'toolExecutionEnd',
    ]);
    const ends = turn0.flatMap((event) => (event.type === 'toolExecutionEnd' ? [[event.toolName, event.isError]] : []));
    expect(ends).toEqual([
      ['read_file', false],
      ['grep', false],
      ['run_tests', true],
    ]);
  });

  it('prints the lifecycle: turns, live progress, steering, approval, turn ends and the answer, in order', () => {
    const expectedInOrder = [
      'you: The parser test fails on empty input. Find the bug and fix it.',
      '▶ run started',
      'turn 0',
      '  → read_file {"path":"src/parser.ts"}',
      '  → grep {"pattern":"parseConfig","path":"src"}',
      '  → run_tests {}',
      '  ✓ read_file: export function parseConfig(text: string): Record<string, string> { (+8 lines)',
      "  ✓ grep: src/cli.ts:2: import { parseConfig } from './parser.js'; (+4 lines)",
      '  ⚙ run_tests 40% 12/30 tests',
      `  you (steering): ${STEERING_MESSAGE}`,
      '  ✉ steering queued: unfinished tools get 120 ms, then are cancelled',
      `  ✗ run_tests: ${CANCELLED_BY_STEERING}`,
      '  ■ turn 0 ended: steeringInterrupt · 3 tool results, 1 error',
      'turn 1',
      '  ✉ steering delivered as the input of turn 1',
      '  → write_file {"path":"src/parser.ts","content":"export function parseConfig(text: st…',
      '  ✋ approval handler: write_file src/parser.ts → auto-approved (an app would ask the user here)',
      '  ✔ write_file approved',
      '  ✓ write_file: Wrote 11 lines to src/parser.ts.',
      '  ■ turn 1 ended: toolsExecuted · 1 tool result',
      'turn 2',
      '  → run_tests {"filter":"parser"}',
      '  ⚙ run_tests 100% 2/2 tests',
      '  ✓ run_tests: 2 passed, 0 failed',
      'turn 3',
      `  assistant: ${FINAL_ANSWER.split('\n')[0]}`,
      '  ■ turn 3 ended: complete',
      '■ run ended: completed (naturalEnd)',
      'checkInvariants: ok',
      'counters',
    ];
    let from = 0;
    for (const expected of expectedInOrder) {
      const at = lines.findIndex((line, index) => index >= from && line.startsWith(expected));
      expect(at, `"${expected}" after line ${from}`).toBeGreaterThanOrEqual(from);
      from = at + 1;
    }
  });

  it('prints every progress update of the first read_file and grep, indented in their turn', () => {
    const progress = lines.filter((line) => line.startsWith('  ⚙ read_file') || line.startsWith('  ⚙ grep'));
    expect(progress.sort()).toEqual(
      [
        '  ⚙ grep 33% 1/3 files',
        '  ⚙ grep 67% 2/3 files',
        '  ⚙ grep 100% 3/3 files',
        '  ⚙ read_file 50% 129/258 bytes',
        '  ⚙ read_file 100% 258/258 bytes',
      ].sort(),
    );
  });

  it('ends with the counters table and no color codes when not a terminal', () => {
    const table = lines.slice(lines.indexOf('counters') + 1).filter((line) => line !== '');
    expect(table).toEqual(counterRows(outcome.result.counters).map((row) => `  ${row}`));
    expect(table[0]).toBe('  turns                      4    steeringDelivered          1');
    expect(transcript).not.toContain('\x1b');
  });
});

describe('demo on a terminal', () => {
  it('colors its lines and rewrites a tool progress line in place', async () => {
    const { outcome, transcript } = await demo(true);
    expect(outcome.result.status).toBe('completed');
    expect(transcript).toContain('\x1b[1mturn 0\x1b[0m');
    // run_tests reports 10%, 20%, 30% back to back in turn 0: the later ones overwrite the earlier.
    expect(transcript).toContain('\x1b[1A\x1b[2K');
  });
});

describe('counter table', () => {
  it('lists failure codes and cost', () => {
    const rows = counterRows({ ...zeroCounters(), costUsd: 0.01234, failureCodes: { rateLimit: 2, network: 1 } });
    expect(rows).toHaveLength(11);
    expect(rows.find((row) => row.includes('costUsd'))).toContain('costUsd              $0.0123');
    expect(rows.at(-1)).toBe('toolCallsInvalid           0    failureCodes        rateLimit=2,network=1');
  });
});

describe('provider choice from the environment', () => {
  it('uses the offline script when no provider is configured, or with --offline', () => {
    expect(chooseProvider({})).toEqual({
      kind: 'scripted',
      reason: 'no OPENAI_BASE_URL, OPENAI_API_KEY or ANTHROPIC_API_KEY set',
    });
    expect(chooseProvider({ OPENAI_API_KEY: 'sk-x' }, ['--offline'])).toEqual({
      kind: 'scripted',
      reason: '--offline',
    });
    expect(chooseProvider({ OPENAI_API_KEY: '  ' })).toMatchObject({ kind: 'scripted' });
  });

  it('prefers an OpenAI-compatible server, which needs no key', () => {
    expect(chooseProvider({ OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1', ANTHROPIC_API_KEY: 'a' })).toEqual({
      kind: 'openai',
      model: DEFAULT_OPENAI_MODEL,
      baseURL: 'http://127.0.0.1:11434/v1',
    });
    expect(chooseProvider({ OPENAI_API_KEY: 'sk-x', OPENAI_MODEL: 'gpt-4.1' })).toEqual({
      kind: 'openai',
      model: 'gpt-4.1',
      apiKey: 'sk-x',
    });
  });

  it('uses Anthropic when only ANTHROPIC_API_KEY is set', () => {
    const choice = chooseProvider({ ANTHROPIC_API_KEY: 'sk-ant' });
    expect(choice).toEqual({ kind: 'anthropic', model: DEFAULT_ANTHROPIC_MODEL, apiKey: 'sk-ant' });
    expect(describeChoice(choice)).toBe(`Anthropic model ${DEFAULT_ANTHROPIC_MODEL}`);
  });

  it('loads the Anthropic adapter lazily', async () => {
    const model = await loadProviderModel({ kind: 'anthropic', model: 'claude-haiku-4-5', apiKey: 'sk-ant' });
    expect(model.name).toBe('claude-haiku-4-5');
  });
});

describe('demo on a real provider protocol', () => {
  let server: ProtocolServer;
  beforeAll(async () => {
    server = await ProtocolServer.start();
  });
  afterAll(() => server.close());

  it('runs the session through the OpenAI-compatible adapter named by OPENAI_BASE_URL', async () => {
    const reply = { text: ['Nothing to ', 'fix here.'], finish: 'stop' as const, usage: { input: 40, output: 5 } };
    server.respondWith(sse(sseText(openAIWire.events(reply))));
    const choice = chooseProvider({ OPENAI_BASE_URL: `${server.url}/v1` });
    if (choice.kind === 'scripted') throw new Error('expected a provider');
    const model = await loadProviderModel(choice);
    let transcript = '';
    const outcome = await runDemo({
      write: (text) => (transcript += text),
      model,
      modelDescription: describeChoice(choice),
    });
    expect(outcome.result.status).toBe('completed');
    expect(outcome.violations).toEqual([]);
    expect(transcript).toContain(
      `agentchart demo · ${DEFAULT_OPENAI_MODEL}\nOpenAI-compatible model ${DEFAULT_OPENAI_MODEL} at ${server.url}/v1\n`,
    );
    expect(transcript).toContain('  assistant: Nothing to fix here.\n');
    expect(server.requests.map((request) => request.path)).toEqual(['/v1/chat/completions']);
  });
});
