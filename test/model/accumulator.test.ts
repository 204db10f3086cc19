import { describe, expect, it } from 'vitest';
import type { ModelStreamEvent } from 'agentchart';
import { modelError, StreamAccumulator, type MessageDelta } from 'agentchart/model-kit';
import { AssistantMessageSchema } from '../../src/domain/messages.js';

function feed(events: ModelStreamEvent[], model = 'm1'): { acc: StreamAccumulator; deltas: MessageDelta[] } {
  const acc = new StreamAccumulator(model);
  const deltas: MessageDelta[] = [];
  for (const event of events) deltas.push(...acc.push(event));
  return { acc, deltas };
}

describe('StreamAccumulator ordering', () => {
  it('extends consecutive deltas and opens a new block when the kind changes', () => {
    const { acc, deltas } = feed([
      { type: 'start' },
      { type: 'thinkingDelta', delta: 'hm' },
      { type: 'thinkingDelta', delta: 'm.' },
      { type: 'textDelta', delta: 'Hel' },
      { type: 'textDelta', delta: 'lo' },
      { type: 'thinkingDelta', delta: 'again' },
      { type: 'textDelta', delta: '!' },
      { type: 'done', stopReason: 'stop' },
    ]);
    expect(deltas).toEqual([
      { type: 'thinking', index: 0, text: 'hm' },
      { type: 'thinking', index: 0, text: 'm.' },
      { type: 'text', index: 1, text: 'Hel' },
      { type: 'text', index: 1, text: 'lo' },
      { type: 'thinking', index: 2, text: 'again' },
      { type: 'text', index: 3, text: '!' },
    ]);
    expect(acc.finish()).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', text: 'hmm.' },
        { type: 'text', text: 'Hello' },
        { type: 'thinking', text: 'again' },
        { type: 'text', text: '!' },
      ],
      stopReason: 'stop',
      model: 'm1',
    });
  });

  it('places parallel tool calls in order of first appearance with fragments interleaved by index', () => {
    const { acc, deltas } = feed([
      { type: 'textDelta', delta: 'Let me look.' },
      { type: 'toolCallStart', index: 1, id: 'b', name: 'read' },
      { type: 'toolCallStart', index: 0, id: 'a', name: 'grep' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '{"pat' },
      { type: 'toolCallDelta', index: 1, argumentsDelta: '{"path":' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: 'tern":"x"}' },
      { type: 'toolCallDelta', index: 1, argumentsDelta: '"f.ts"}' },
      { type: 'toolCallEnd', index: 0 },
      { type: 'toolCallEnd', index: 1 },
      { type: 'textDelta', delta: 'after' },
      { type: 'usage', usage: { input: 10, output: 3 } },
      { type: 'done', stopReason: 'toolUse' },
    ]);
    expect(deltas).toEqual([
      { type: 'text', index: 0, text: 'Let me look.' },
      { type: 'toolCall', index: 1, id: 'b', name: 'read', argumentsDelta: '' },
      { type: 'toolCall', index: 2, id: 'a', name: 'grep', argumentsDelta: '' },
      { type: 'toolCall', index: 2, id: 'a', name: 'grep', argumentsDelta: '{"pat' },
      { type: 'toolCall', index: 1, id: 'b', name: 'read', argumentsDelta: '{"path":' },
      { type: 'toolCall', index: 2, id: 'a', name: 'grep', argumentsDelta: 'tern":"x"}' },
      { type: 'toolCall', index: 1, id: 'b', name: 'read', argumentsDelta: '"f.ts"}' },
      { type: 'text', index: 3, text: 'after' },
    ]);
    const message = acc.finish();
    expect(message).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'toolCall', id: 'b', name: 'read', arguments: { path: 'f.ts' } },
        { type: 'toolCall', id: 'a', name: 'grep', arguments: { pattern: 'x' } },
        { type: 'text', text: 'after' },
      ],
      stopReason: 'toolUse',
      model: 'm1',
      usage: { input: 10, output: 3 },
    });
    expect(AssistantMessageSchema.parse(message)).toEqual(message);
    expect(acc.invalidToolCalls).toEqual([]);
  });

  it('ignores events after a terminal event', () => {
    const { acc, deltas } = feed([
      { type: 'textDelta', delta: 'a' },
      { type: 'done', stopReason: 'stop' },
      { type: 'textDelta', delta: 'b' },
      { type: 'toolCallStart', index: 0, id: 'x', name: 't' },
      { type: 'usage', usage: { input: 1, output: 1 } },
      { type: 'error', error: modelError('network') },
    ]);
    expect(deltas).toEqual([{ type: 'text', index: 0, text: 'a' }]);
    expect(acc.terminal).toEqual({ kind: 'done', stopReason: 'stop' });
    expect(acc.finish()).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'a' }],
      stopReason: 'stop',
      model: 'm1',
    });
  });

  it('skips empty text deltas without opening a block', () => {
    const { acc, deltas } = feed([
      { type: 'textDelta', delta: '' },
      { type: 'thinkingDelta', delta: '' },
    ]);
    expect(deltas).toEqual([]);
    expect(acc.partial.content).toEqual([]);
  });
});

describe('StreamAccumulator tool-call arguments', () => {
  it('turns empty arguments into {} and upgrades stop to toolUse when calls exist', () => {
    const { acc } = feed([
      { type: 'toolCallStart', index: 0, id: 'c1', name: 'now' },
      { type: 'toolCallEnd', index: 0 },
      { type: 'done', stopReason: 'stop' },
    ]);
    expect(acc.finish()).toEqual({
      role: 'assistant',
      content: [{ type: 'toolCall', id: 'c1', name: 'now', arguments: {} }],
      stopReason: 'toolUse',
      model: 'm1',
    });
    expect(acc.invalidToolCalls).toEqual([]);
  });

  it('parses the concatenated fragments once and keeps partial arguments {} until then', () => {
    const { acc } = feed([
      { type: 'toolCallStart', index: 0, id: 'c1', name: 'add' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '{"a":1,' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '"b":[2,3]}' },
      { type: 'toolCallEnd', index: 0 },
    ]);
    expect(acc.partial).toEqual({
      role: 'assistant',
      content: [{ type: 'toolCall', id: 'c1', name: 'add', arguments: {} }],
      stopReason: 'stop',
      model: 'm1',
    });
    acc.push({ type: 'done', stopReason: 'toolUse' });
    const parse = JSON.parse;
    let parses = 0;
    JSON.parse = ((text: string) => {
      parses++;
      return parse(text);
    }) as typeof JSON.parse;
    try {
      expect(acc.finish().content).toEqual([
        { type: 'toolCall', id: 'c1', name: 'add', arguments: { a: 1, b: [2, 3] } },
      ]);
      expect(acc.invalidToolCalls).toEqual([]);
      acc.finish();
    } finally {
      JSON.parse = parse;
    }
    expect(parses).toBe(1);
  });

  it('records malformed JSON and non-object JSON with {} in the message', () => {
    const { acc } = feed([
      { type: 'toolCallStart', index: 0, id: 'c1', name: 'a' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '{"x":' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: ' nope}' },
      { type: 'toolCallEnd', index: 0 },
      { type: 'toolCallStart', index: 1, id: 'c2', name: 'b' },
      { type: 'toolCallDelta', index: 1, argumentsDelta: '[1,2]' },
      { type: 'toolCallEnd', index: 1 },
      { type: 'toolCallStart', index: 2, id: 'c3', name: 'c' },
      { type: 'toolCallDelta', index: 2, argumentsDelta: '{"ok":true}' },
      { type: 'toolCallEnd', index: 2 },
      { type: 'done', stopReason: 'toolUse' },
    ]);
    expect(acc.finish().content).toEqual([
      { type: 'toolCall', id: 'c1', name: 'a', arguments: {} },
      { type: 'toolCall', id: 'c2', name: 'b', arguments: {} },
      { type: 'toolCall', id: 'c3', name: 'c', arguments: { ok: true } },
    ]);
    expect(acc.invalidToolCalls).toEqual([
      { id: 'c1', name: 'a', index: 0, providerIndex: 0, rawArguments: '{"x": nope}', reason: 'malformedJson' },
      { id: 'c2', name: 'b', index: 1, providerIndex: 1, rawArguments: '[1,2]', reason: 'malformedJson' },
    ]);
  });

  it('marks the unfinished tool call of a length-stopped message as truncated', () => {
    const { acc } = feed([
      { type: 'toolCallStart', index: 0, id: 'c1', name: 'write' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '{"p":"a"}' },
      { type: 'toolCallEnd', index: 0 },
      { type: 'toolCallStart', index: 1, id: 'c2', name: 'write' },
      { type: 'toolCallDelta', index: 1, argumentsDelta: '{"p":"lo' },
      { type: 'done', stopReason: 'length' },
    ]);
    expect(acc.finish()).toEqual({
      role: 'assistant',
      content: [
        { type: 'toolCall', id: 'c1', name: 'write', arguments: { p: 'a' } },
        { type: 'toolCall', id: 'c2', name: 'write', arguments: {} },
      ],
      stopReason: 'length',
      model: 'm1',
    });
    expect(acc.invalidToolCalls).toEqual([
      { id: 'c2', name: 'write', index: 1, providerIndex: 1, rawArguments: '{"p":"lo', reason: 'truncated' },
    ]);
  });

  it('with stopReason length an ended but unparseable call is truncated too', () => {
    const { acc } = feed([
      { type: 'toolCallStart', index: 0, id: 'c1', name: 'write' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '{"p":' },
      { type: 'toolCallEnd', index: 0 },
      { type: 'done', stopReason: 'length' },
    ]);
    expect(acc.invalidToolCalls.map((call) => call.reason)).toEqual(['truncated']);
  });

  it('treats a call without toolCallEnd as truncated even when its JSON parses', () => {
    const { acc } = feed([
      { type: 'toolCallStart', index: 0, id: 'c1', name: 'x' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '{"a":1}' },
      { type: 'done', stopReason: 'toolUse' },
    ]);
    expect(acc.finish().content).toEqual([{ type: 'toolCall', id: 'c1', name: 'x', arguments: {} }]);
    expect(acc.invalidToolCalls).toEqual([
      { id: 'c1', name: 'x', index: 0, providerIndex: 0, rawArguments: '{"a":1}', reason: 'truncated' },
    ]);
  });

  it('generates call_<index> for an empty id and keeps ids unique within the message', () => {
    const { acc, deltas } = feed([
      { type: 'toolCallStart', index: 3, id: '', name: 'a' },
      { type: 'toolCallEnd', index: 3 },
      { type: 'toolCallStart', index: 4, id: 'call_3', name: 'b' },
      { type: 'toolCallEnd', index: 4 },
      { type: 'toolCallStart', index: 5, id: 'dup', name: 'c' },
      { type: 'toolCallEnd', index: 5 },
      { type: 'toolCallStart', index: 6, id: 'dup', name: 'd' },
      { type: 'toolCallEnd', index: 6 },
      { type: 'done', stopReason: 'toolUse' },
    ]);
    expect(deltas.map((delta) => (delta.type === 'toolCall' ? delta.id : null))).toEqual([
      'call_3',
      'call_3_2',
      'dup',
      'dup_2',
    ]);
    expect(acc.finish().content.map((block) => (block.type === 'toolCall' ? block.id : null))).toEqual([
      'call_3',
      'call_3_2',
      'dup',
      'dup_2',
    ]);
  });

  it('opens a call for fragments of an index that never started, so no arguments are lost', () => {
    const { acc, deltas } = feed([
      { type: 'toolCallDelta', index: 0, argumentsDelta: '{}' },
      { type: 'toolCallEnd', index: 0 },
      { type: 'done', stopReason: 'toolUse' },
    ]);
    expect(deltas).toEqual([{ type: 'toolCall', index: 0, id: 'call_0', name: '', argumentsDelta: '{}' }]);
    expect(acc.finish().content).toEqual([{ type: 'toolCall', id: 'call_0', name: '', arguments: {} }]);
  });

  it('ends the stream as invalidResponse on a second start for an open index (two calls are never glued)', () => {
    const { acc } = feed([
      { type: 'toolCallStart', index: 0, id: 'a', name: 'x' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '{"n":' },
      { type: 'toolCallStart', index: 0, id: 'b', name: 'y' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '1}' },
      { type: 'done', stopReason: 'toolUse' },
    ]);
    expect(acc.terminal).toMatchObject({ kind: 'error', error: { kind: 'invalidResponse', retryable: true } });
    expect(acc.finish()).toMatchObject({
      stopReason: 'error',
      content: [{ type: 'toolCall', id: 'a', name: 'x', arguments: {} }],
    });
  });

  it('reuses an ended index for a new call, and lets a start name a call its stray fragment opened', () => {
    const { acc } = feed([
      { type: 'toolCallStart', index: 0, id: 'a', name: 'x' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '{"n":1}' },
      { type: 'toolCallEnd', index: 0 },
      { type: 'toolCallStart', index: 0, id: 'b', name: 'y' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '{"n":2}' },
      { type: 'toolCallEnd', index: 0 },
      { type: 'toolCallDelta', index: 1, argumentsDelta: '{"n":3}' },
      { type: 'toolCallStart', index: 1, id: 'c', name: 'z' },
      { type: 'toolCallEnd', index: 1 },
      { type: 'done', stopReason: 'toolUse' },
    ]);
    expect(acc.finish().content).toEqual([
      { type: 'toolCall', id: 'a', name: 'x', arguments: { n: 1 } },
      { type: 'toolCall', id: 'b', name: 'y', arguments: { n: 2 } },
      { type: 'toolCall', id: 'call_1', name: 'z', arguments: { n: 3 } },
    ]);
  });
});

describe('StreamAccumulator endings', () => {
  it('turns an error event into stopReason error with the message, keeping received blocks', () => {
    const error = modelError('rateLimit', 'slow down', { retryAfterMs: 2000 });
    const { acc } = feed([
      { type: 'textDelta', delta: 'partial' },
      { type: 'usage', usage: { input: 5, output: 1 } },
      { type: 'error', error },
    ]);
    expect(acc.terminal).toEqual({ kind: 'error', error });
    expect(acc.finish()).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'partial' }],
      stopReason: 'error',
      model: 'm1',
      usage: { input: 5, output: 1 },
      errorMessage: 'slow down',
    });
  });

  it('maps an aborted error event to stopReason aborted', () => {
    const { acc } = feed([{ type: 'error', error: modelError('aborted', 'request aborted') }]);
    expect(acc.finish()).toEqual({
      role: 'assistant',
      content: [],
      stopReason: 'aborted',
      model: 'm1',
      errorMessage: 'request aborted',
    });
  });

  it('treats a stream that ends without done or error as a network error', () => {
    const { acc } = feed([{ type: 'textDelta', delta: 'cut' }]);
    expect(acc.terminal).toBeNull();
    expect(acc.finish()).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'cut' }],
      stopReason: 'error',
      model: 'm1',
      errorMessage: 'stream ended without a terminal event',
    });
    expect(acc.terminal).toEqual({
      kind: 'error',
      error: modelError('network', 'stream ended without a terminal event'),
    });
    expect(acc.push({ type: 'textDelta', delta: 'late' })).toEqual([]);
  });

  it('abort keeps every block, parsing what it can, and ignores later events', () => {
    const { acc } = feed([
      { type: 'thinkingDelta', delta: 'plan' },
      { type: 'toolCallStart', index: 0, id: 'c1', name: 'a' },
      { type: 'toolCallDelta', index: 0, argumentsDelta: '{"q":1}' },
      { type: 'toolCallStart', index: 1, id: 'c2', name: 'b' },
      { type: 'toolCallDelta', index: 1, argumentsDelta: '{"q":' },
    ]);
    expect(acc.abort('user cancelled')).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', text: 'plan' },
        { type: 'toolCall', id: 'c1', name: 'a', arguments: { q: 1 } },
        { type: 'toolCall', id: 'c2', name: 'b', arguments: {} },
      ],
      stopReason: 'aborted',
      model: 'm1',
      errorMessage: 'user cancelled',
    });
    expect(acc.terminal).toEqual({ kind: 'error', error: modelError('aborted', 'user cancelled') });
    expect(acc.push({ type: 'done', stopReason: 'stop' })).toEqual([]);
  });

  it('uses the last usage event', () => {
    const { acc } = feed([
      { type: 'usage', usage: { input: 100, output: 0 } },
      { type: 'usage', usage: { input: 100, output: 42, cacheRead: 7 } },
      { type: 'done', stopReason: 'stop' },
    ]);
    expect(acc.finish().usage).toEqual({ input: 100, output: 42, cacheRead: 7 });
  });
});
