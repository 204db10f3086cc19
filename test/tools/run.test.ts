import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type AnyTool, type ToolContext, type ToolOutput } from 'agentchart';
import { runTool } from 'agentchart/model-kit';

const ctx: ToolContext = {
  toolCallId: 'call_1',
  signal: new AbortController().signal,
  update: async () => {},
  idempotencyKey: 'key_1',
};

function toolReturning(execute: (args: Record<string, unknown>, ctx: ToolContext) => unknown): AnyTool {
  return defineTool({
    name: 't',
    description: 'd',
    parameters: z.object({}).catchall(z.unknown()),
    execute: execute as (args: Record<string, unknown>, ctx: ToolContext) => ToolOutput,
  });
}

describe('runTool', () => {
  it('passes the arguments and context through', async () => {
    const seen: unknown[] = [];
    const tool = toolReturning((args, context) => {
      seen.push(args, context);
      return 'done';
    });
    await runTool(tool, { a: 1 }, ctx);
    expect(seen).toEqual([{ a: 1 }, ctx]);
  });

  it.each<[string, unknown, { content: string; isError: boolean }]>([
    ['a string', 'hello', { content: 'hello', isError: false }],
    ['an empty string', '', { content: '', isError: false }],
    ['{ content }', { content: 'hi' }, { content: 'hi', isError: false }],
    ['{ content, isError: true }', { content: 'bad', isError: true }, { content: 'bad', isError: true }],
    ['{ content, isError: false }', { content: 'fine', isError: false, extra: 1 }, { content: 'fine', isError: false }],
  ])('normalizes %s, sync and async', async (_label, output, expected) => {
    await expect(
      runTool(
        toolReturning(() => output),
        {},
        ctx,
      ),
    ).resolves.toEqual(expected);
    await expect(
      runTool(
        toolReturning(async () => output),
        {},
        ctx,
      ),
    ).resolves.toEqual(expected);
  });

  it('turns a throw into an error result with the message', async () => {
    const result = await runTool(
      toolReturning(() => {
        throw new Error('disk full');
      }),
      {},
      ctx,
    );
    expect(result).toEqual({ content: 'disk full', isError: true });
  });

  it('turns a rejection into an error result with the message', async () => {
    await expect(
      runTool(
        toolReturning(() => Promise.reject(new TypeError('bad path'))),
        {},
        ctx,
      ),
    ).resolves.toEqual({
      content: 'bad path',
      isError: true,
    });
  });

  it.each<[string, unknown, string]>([
    ['a string', 'boom', 'boom'],
    ['a number', 42, '42'],
    ['undefined', undefined, 'undefined'],
    ['an Error without message', new RangeError(), 'RangeError'],
    ['an error-like object', { message: 'from elsewhere' }, 'from elsewhere'],
    ['an unprintable object', Object.create(null), 'unprintable error'],
  ])('uses String(value) or the message for thrown %s', async (_label, thrown, content) => {
    const throwing = toolReturning(() => {
      throw thrown;
    });
    await expect(runTool(throwing, {}, ctx)).resolves.toEqual({ content, isError: true });
    await expect(
      runTool(
        toolReturning(() => Promise.reject(thrown)),
        {},
        ctx,
      ),
    ).resolves.toEqual({ content, isError: true });
  });

  const shape = 'expected a string or { content: string, isError?: boolean }';
  it.each<[string, unknown, string]>([
    ['undefined', undefined, `${shape}, got undefined`],
    ['null', null, `${shape}, got null`],
    ['a number', 7, `${shape}, got number`],
    ['an array', ['a'], `${shape}, got an array`],
    ['an object without content', { text: 'x' }, `${shape}, got an object whose content is undefined`],
    ['a non-string content', { content: 3 }, `${shape}, got an object whose content is number`],
    ['a non-boolean isError', { content: 'x', isError: 'yes' }, 'isError must be a boolean, got string'],
    [
      'an object whose getter throws',
      Object.defineProperty({}, 'content', {
        get() {
          throw new Error('no');
        },
      }),
      'reading it threw: no',
    ],
  ])('reports an invalid return: %s', async (_label, output, detail) => {
    const expected = { content: `tool returned an invalid result: ${detail}`, isError: true };
    await expect(
      runTool(
        toolReturning(() => output),
        {},
        ctx,
      ),
    ).resolves.toEqual(expected);
    await expect(
      runTool(
        toolReturning(async () => output),
        {},
        ctx,
      ),
    ).resolves.toEqual(expected);
  });

  it('settles a synchronous result without waiting for an extra turn', async () => {
    const order: string[] = [];
    void runTool(
      toolReturning(() => 'sync'),
      {},
      ctx,
    ).then(() => order.push('tool'));
    void Promise.resolve().then(() => order.push('microtask'));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(order).toEqual(['tool', 'microtask']);
  });

  it('accepts a foreign thenable', async () => {
    const thenable = { then: (resolve: (value: string) => void) => resolve('from thenable') };
    await expect(
      runTool(
        toolReturning(() => thenable),
        {},
        ctx,
      ),
    ).resolves.toEqual({ content: 'from thenable', isError: false });
  });
});
