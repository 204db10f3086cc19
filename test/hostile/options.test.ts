import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { AgentError, createAgent, defineTool, memoryStore, type AgentOptions } from 'agentchart';
import { scriptedModel } from 'agentchart/testing';
import { expectTrusted, watchTheProcess } from './harness.js';

// The hostile-input contract, options: one zod schema parses every option in createAgent. Every enumerated string,
// every number's range (delays 0…2³¹−1 ms), fallbackModels entries, context, retry and timeouts:
// anything else is AgentError('InvalidOptions') naming the option's path. A key that looks like a
// misspelled option is refused too: a typo never silently changes behaviour.

watchTheProcess();

const model = scriptedModel([{ text: 'fine' }]);
const BIG = 2 ** 31;

/** The options under test, each with the path the error must name. */
const BAD_OPTIONS: Array<[string, Record<string, unknown>, string]> = [
  ['toolExecution misspelled', { toolExecution: 'paralel' }, 'toolExecution'],
  ['toolExecution concurrency 0', { toolExecution: { concurrency: 0 } }, 'toolExecution'],
  ['toolExecution concurrency NaN', { toolExecution: { concurrency: Number.NaN } }, 'toolExecution'],
  ['toolExecution partition that is not a function', { toolExecution: { partition: 'by name' } }, 'toolExecution'],
  ['approvalMode misspelled', { approvalMode: 'allways' }, 'approvalMode'],
  ['steeringMode misspelled', { steeringMode: 'one-at-a-time' }, 'steeringMode'],
  ['followUpMode wrong type', { followUpMode: 1 }, 'followUpMode'],
  ['streaming misspelled', { streaming: 'stream' }, 'streaming'],
  ['steeringInterrupts as a string', { steeringInterrupts: 'false' }, 'steeringInterrupts'],
  ['steeringGraceMs negative', { steeringGraceMs: -1 }, 'steeringGraceMs'],
  ['steeringGraceMs NaN', { steeringGraceMs: Number.NaN }, 'steeringGraceMs'],
  ['steeringGraceMs ≥ 2³¹ ms (would fire after 1 ms)', { steeringGraceMs: BIG }, 'steeringGraceMs'],
  ['retry.maxAttempts 0', { retry: { maxAttempts: 0 } }, 'retry.maxAttempts'],
  ['retry.maxAttempts 2.5', { retry: { maxAttempts: 2.5 } }, 'retry.maxAttempts'],
  ['retry.baseDelayMs Infinity', { retry: { baseDelayMs: Number.POSITIVE_INFINITY } }, 'retry.baseDelayMs'],
  ['retry.maxDelayMs ≥ 2³¹ ms', { retry: { maxDelayMs: BIG } }, 'retry.maxDelayMs'],
  ['retry.maxRetryAfterMs negative', { retry: { maxRetryAfterMs: -5 } }, 'retry.maxRetryAfterMs'],
  ['retry.jitter as a string', { retry: { jitter: 'yes' } }, 'retry.jitter'],
  ['retry with an unknown key', { retry: { maxAttempt: 3 } }, 'retry.maxAttempt'],
  ['timeouts.modelIdleMs 0', { timeouts: { modelIdleMs: 0 } }, 'timeouts.modelIdleMs'],
  ['timeouts.toolMs ≥ 2³¹ ms', { timeouts: { toolMs: BIG } }, 'timeouts.toolMs'],
  ['timeouts.toolMs as a string', { timeouts: { toolMs: '5s' } }, 'timeouts.toolMs'],
  ['timeouts with an unknown key', { timeouts: { modelMs: 10 } }, 'timeouts.modelMs'],
  ['maxTurns 0', { maxTurns: 0 }, 'maxTurns'],
  ['maxTurns NaN', { maxTurns: Number.NaN }, 'maxTurns'],
  ['maxTurns 1.5', { maxTurns: 1.5 }, 'maxTurns'],
  ['fallbackModels [null]', { fallbackModels: [null] }, 'fallbackModels[0]'],
  ['fallbackModels with a model without stream()', { fallbackModels: [model, { name: 'half' }] }, 'fallbackModels[1]'],
  ['fallbackModels not an array', { fallbackModels: model }, 'fallbackModels'],
  ['context.maxTokens negative', { context: { maxTokens: -100 } }, 'context.maxTokens'],
  ['context.transform not a function', { context: { transform: 'compact' } }, 'context.transform'],
  ['context with an unknown key', { context: { maxToken: 1000 } }, 'context.maxToken'],
  ['policies with a misspelled slot', { policies: { preturn: [() => ({ verdict: 'continue' })] } }, 'policies.preturn'],
  ['a policy that is not a function', { policies: { postTurn: [{ verdict: 'stop' }] } }, 'policies.postTurn[0]'],
  ['approval not a function', { approval: true }, 'approval'],
  ['finalReport without toolName', { finalReport: {} }, 'finalReport.toolName'],
  ['clock without setTimeout', { clock: {} }, 'clock'],
  ['systemPrompt not a string', { systemPrompt: 42 }, 'systemPrompt'],
  ['tools not an array', { tools: 'all' }, 'tools'],
  ['onSubscriberError not a function', { onSubscriberError: 'log' }, 'onSubscriberError'],
  ['otel that is not an observer', { otel: { tracer: null } }, 'otel'],
  ['sessionId empty', { store: memoryStore(), sessionId: '' }, 'sessionId'],
  ['store without load()', { store: {}, sessionId: 's' }, 'store'],
  ['a misspelled option name', { toolExecutoin: 'sequential' }, 'toolExecutoin'],
  ['an option name in the wrong case', { MaxTurns: 3 }, 'MaxTurns'],
  ['another near miss', { steeringInterupts: false }, 'steeringInterupts'],
];

function invalidOptions(options: Record<string, unknown>): AgentError {
  try {
    createAgent({ model, ...options } as unknown as AgentOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(AgentError);
    return error as AgentError;
  }
  throw new Error('createAgent accepted the options');
}

describe('createAgent refuses bad options by name', () => {
  it.each(BAD_OPTIONS)('%s → InvalidOptions naming `%s`', (_name, options, path) => {
    const error = invalidOptions(options);
    expect(error.code).toBe('InvalidOptions');
    expect(error.message).toContain(`\`${path}`);
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['an array', [model]],
    ['a string', 'gpt-4o'],
  ])('createAgent(%s) → InvalidOptions', (_name, options) => {
    expect(() => createAgent(options as unknown as AgentOptions)).toThrow(
      expect.objectContaining({ code: 'InvalidOptions' }),
    );
  });

  it.each([
    ['no model', {}],
    ['a model that is a string', { model: 'gpt-4o' }],
    ['a model without a name', { model: { stream: () => [] } }],
  ])('%s → InvalidOptions naming `model`', (_name, options) => {
    let caught: unknown;
    try {
      createAgent(options as unknown as AgentOptions);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'InvalidOptions', message: expect.stringContaining('`model`') });
  });

  it('an options object whose getter throws → InvalidOptions', () => {
    const options = { model };
    Object.defineProperty(options, 'retry', {
      get: () => {
        throw new Error('getter exploded');
      },
      enumerable: true,
    });
    expect(() => createAgent(options)).toThrow(expect.objectContaining({ code: 'InvalidOptions' }));
  });

  it('defineTool refuses a timeoutMs that is not a delay', () => {
    for (const timeoutMs of [0, -1, Number.NaN, BIG, '100']) {
      expect(() =>
        defineTool({
          name: 'slow',
          description: 'slow',
          parameters: z.object({}),
          timeoutMs: timeoutMs as number,
          execute: () => 'ok',
        }),
      ).toThrow(expect.objectContaining({ code: 'InvalidOptions', message: expect.stringContaining('timeoutMs') }));
    }
  });
});

describe('createAgent accepts well-formed options, including the edges of every range', () => {
  it('delays of 0 and 2³¹−1 ms, maxTurns Infinity, and options other modules read pass', async () => {
    const clock = new SimulatedClock();
    const agent = createAgent({
      model: scriptedModel([{ text: 'fine' }]),
      fallbackModels: [],
      steeringGraceMs: 0,
      retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: BIG - 1, maxRetryAfterMs: 0, jitter: false },
      timeouts: { modelIdleMs: BIG - 1, toolMs: 1 },
      maxTurns: Number.POSITIVE_INFINITY,
      toolExecution: { concurrency: 4 },
      clock,
      // An option another module reads before its schema entry lands: passed through untouched.
      ...({ replayBuffer: 100 } as object),
    });
    const { result } = await expectTrusted(agent.prompt('go'), ['go'], clock);
    expect(result.status).toBe('completed');
  });
});
