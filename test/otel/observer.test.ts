import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { trace, type Tracer } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { AgentError, createAgent, defineTool, type AgentOptions } from 'agentchart';
import { otelObserver, type OtelObserverOptions } from 'agentchart/otel';
import { scriptedModel, type ScriptEntry } from 'agentchart/testing';
import { expectCounters, expectInvariants, finished, ofType, settle } from '../support/harness.js';
import { fromReadable, spanTree, type SpanNode } from './span-tree.js';

function tracing(options: ConstructorParameters<typeof BasicTracerProvider>[0] = {}) {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ ...options, spanProcessors: [new SimpleSpanProcessor(memory)] });
  return { memory, provider, tree: () => spanTree(memory.getFinishedSpans().map(fromReadable)) };
}

const echo = defineTool({
  name: 'echo',
  description: 'Echoes.',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

function agentWith(
  script: ScriptEntry[],
  otel: OtelObserverOptions,
  extra: Partial<AgentOptions> & { clock?: SimulatedClock } = {},
) {
  const clock = extra.clock ?? new SimulatedClock();
  const model = scriptedModel(script, { name: 'm1', provider: 'openai', clock });
  return createAgent({ model, tools: [echo], retry: { jitter: false }, ...extra, clock, otel: otelObserver(otel) });
}

const flatten = (tree: SpanNode[]): SpanNode[] => tree.flatMap((node) => [node, ...flatten(node.children)]);
const CONTENT_KEYS = [
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.system_instructions',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
];

afterEach(() => trace.disable());

describe('OpenTelemetry: message content', () => {
  const script: ScriptEntry[] = [
    {
      thinking: 'use the tool',
      text: 'Let me echo.',
      toolCalls: [
        { id: 'c1', name: 'echo', arguments: { text: 'hi' } },
        { id: 'c2', name: 'nope', arguments: {} },
      ],
    },
    { text: 'Done.', usage: { input: 4, output: 1 } },
  ];

  it("a schema's output JSON cannot hold (a BigInt) is recorded as a trace writes it; the tool runs with it", async () => {
    const { provider, tree } = tracing();
    const ledger = defineTool({
      name: 'ledger',
      description: 'Books an amount its schema makes a BigInt.',
      parameters: z.object({ amount: z.string().transform((text) => BigInt(text)) }),
      execute: ({ amount }) => `booked ${typeof amount} ${String(amount)}`,
    });
    const agent = agentWith(
      [{ toolCalls: [{ id: 'l1', name: 'ledger', arguments: { amount: '5' } }] }, { text: 'Booked.' }],
      { tracer: provider.getTracer('t'), captureContent: true },
      { tools: [ledger] },
    );
    const { result, events } = await finished(agent.prompt('book'));
    expectInvariants(events, result.messages);
    expect(result).toMatchObject({ status: 'completed', endReason: 'naturalEnd' });
    const tool = tree()[0]!.children[0]!.children.find((span) => span.name === 'execute_tool ledger');
    expect(tool?.attributes).toMatchObject({
      'gen_ai.tool.call.arguments': '{"amount":"5n"}',
      'gen_ai.tool.call.result': 'booked bigint 5',
    });
    await provider.shutdown();
  });

  it("is recorded only with captureContent: true, in the conventions' JSON shape", async () => {
    const { provider, tree } = tracing();
    const agent = agentWith(
      script,
      { tracer: provider.getTracer('t'), captureContent: true },
      { systemPrompt: 'Be brief.' },
    );
    const { result, events } = await finished(agent.prompt('say hi'));
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 2,
      toolCallsRequested: 2,
      toolCallsExecuted: 1,
      toolCallsInvalid: 1,
      tokensIn: 4,
      tokensOut: 1,
    });

    const [turn0, turn1] = tree()[0]!.children;
    const [chat0, ...tools] = turn0!.children;
    expect(JSON.parse(String(chat0!.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'say hi' }] },
    ]);
    expect(JSON.parse(String(chat0!.attributes['gen_ai.system_instructions']))).toEqual([
      { type: 'text', content: 'Be brief.' },
    ]);
    expect(JSON.parse(String(chat0!.attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', content: 'use the tool' },
          { type: 'text', content: 'Let me echo.' },
          { type: 'tool_call', id: 'c1', name: 'echo', arguments: { text: 'hi' } },
          { type: 'tool_call', id: 'c2', name: 'nope', arguments: {} },
        ],
        finish_reason: 'tool_call',
      },
    ]);
    // A call that never started (unknown tool) still gets its span, holding only its result.
    expect(tools).toEqual([
      expect.objectContaining({
        name: 'execute_tool echo',
        attributes: expect.objectContaining({
          'gen_ai.tool.call.arguments': '{"text":"hi"}',
          'gen_ai.tool.call.result': 'echo: hi',
        }),
        status: { code: 'UNSET' },
      }),
      expect.objectContaining({
        name: 'execute_tool nope',
        attributes: expect.objectContaining({
          'agentchart.tool.started': false,
          'error.type': 'toolError',
          'gen_ai.tool.call.result': expect.stringContaining('nope'),
        }),
        status: { code: 'ERROR', message: expect.stringContaining('nope') },
      }),
    ]);
    expect(tools[1]!.attributes).not.toHaveProperty('gen_ai.tool.call.arguments');
    const inputOfSecondCall = JSON.parse(String(turn1!.children[0]!.attributes['gen_ai.input.messages'])) as Array<{
      role: string;
    }>;
    expect(inputOfSecondCall.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    await provider.shutdown();
  });

  it('is absent by default: no span carries prompts, replies, arguments or results', async () => {
    const { provider, tree } = tracing();
    const agent = agentWith(script, { tracer: provider.getTracer('t') }, { systemPrompt: 'Be brief.' });
    const { result, events } = await finished(agent.prompt('say hi'));
    expectInvariants(events, result.messages);
    const spans = flatten(tree());
    expect(spans.map((s) => s.name)).toEqual([
      'invoke_agent',
      'turn',
      'chat m1',
      'execute_tool echo',
      'execute_tool nope',
      'turn',
      'chat m1',
    ]);
    for (const span of spans) for (const key of CONTENT_KEYS) expect(span.attributes).not.toHaveProperty(key);
    expect(spans.find((s) => s.name === 'execute_tool nope')?.status).toEqual({ code: 'ERROR' });
    await provider.shutdown();
  });
});

describe('OpenTelemetry: failed runs', () => {
  it('retries exhausted: each attempt is an ERROR chat span with its kind, so are the turn and run', async () => {
    const { provider, tree } = tracing();
    const clock = new SimulatedClock();
    const script: ScriptEntry[] = [
      { error: { kind: 'overloaded' } },
      { error: { kind: 'network', message: 'socket hang up' } },
    ];
    const agent = agentWith(
      script,
      { tracer: provider.getTracer('t') },
      { clock, retry: { maxAttempts: 2, jitter: false } },
    );
    const run = agent.prompt('hi');
    await settle();
    clock.increment(1000);
    const { result, events } = await finished(run);
    expect(result).toMatchObject({ status: 'failed', endReason: 'retryExhausted' });
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 1,
      turnsFailed: 1,
      modelCalls: 2,
      retries: 1,
      backoffMs: 1000,
      failureCodes: { overloaded: 1, network: 1 },
    });
    // The final attempt's error reaches the observer on its messageEnd.
    expect(ofType(events, 'messageEnd').map((e) => e.error?.kind)).toEqual(['network']);

    const [agentSpan] = tree();
    expect(agentSpan).toMatchObject({
      attributes: {
        'agentchart.run.status': 'failed',
        'agentchart.run.end_reason': 'retryExhausted',
        'error.type': 'retryExhausted',
      },
      status: { code: 'ERROR' },
    });
    const [turn] = agentSpan!.children;
    expect(turn).toMatchObject({
      attributes: { 'agentchart.turn.end_reason': 'error', 'error.type': 'network' },
      status: { code: 'ERROR' },
    });
    expect(turn!.children.map((chat) => [chat.name, chat.attributes['error.type'], chat.status])).toEqual([
      ['chat m1', 'overloaded', { code: 'ERROR', message: 'overloaded' }],
      ['chat m1', 'network', { code: 'ERROR', message: 'socket hang up' }],
    ]);
    await provider.shutdown();
  });
  it('an abort during a backoff ends every span the run opened: the failed attempt, the turn, the run', async () => {
    const { provider, tree } = tracing();
    const clock = new SimulatedClock();
    const agent = agentWith(
      [{ error: { kind: 'rateLimit', retryAfterMs: 5_000 } }],
      { tracer: provider.getTracer('t') },
      { clock },
    );
    const run = agent.prompt('hi');
    await settle();
    agent.abort('changed my mind');
    const { result, events } = await finished(run);
    expect(result).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 1,
      modelCalls: 1,
      retries: 1,
      backoffMs: 5_000,
      failureCodes: { rateLimit: 1 },
    });

    expect(tree()).toEqual([
      expect.objectContaining({
        name: 'invoke_agent',
        attributes: expect.objectContaining({ 'agentchart.run.status': 'aborted', 'error.type': 'aborted' }),
        status: { code: 'ERROR' },
        children: [
          expect.objectContaining({
            name: 'turn',
            attributes: {
              'agentchart.turn.index': 0,
              'agentchart.turn.end_reason': 'aborted',
              'error.type': 'aborted',
            },
            events: [expect.objectContaining({ name: 'retry' })],
            // The empty message that closes the aborted turn follows no attempt: no second chat span.
            children: [
              expect.objectContaining({
                name: 'chat m1',
                attributes: expect.objectContaining({ 'error.type': 'rateLimit' }),
              }),
            ],
          }),
        ],
      }),
    ]);
    await provider.shutdown();
  });
});

describe('OpenTelemetry: no SDK, sampling, and options', () => {
  it('with no SDK registered nothing is recorded; a provider registered later is then used', async () => {
    const clock = new SimulatedClock();
    const model = scriptedModel([{ text: 'one' }, { text: 'two' }], { name: 'm1', clock });
    const agent = createAgent({ model, clock, otel: otelObserver() });
    const first = await finished(agent.prompt('a'));
    expectInvariants(first.events, first.result.messages);

    const { memory, provider, tree } = tracing();
    trace.setGlobalTracerProvider(provider);
    const second = await finished(agent.prompt('b'));
    expectInvariants([...first.events, ...second.events], second.result.messages);
    expectCounters(second.result.counters, { turns: 2, modelCalls: 2 });
    expect(memory.getFinishedSpans()).toHaveLength(3);
    expect(tree().map((node) => node.attributes['agentchart.run.id'])).toEqual([second.events[0]?.runId]);
    await provider.shutdown();
  });

  it('a run that is not sampled opens one non-recording span and nothing else', async () => {
    const { memory, provider } = tracing({ sampler: new AlwaysOffSampler() });
    const real = provider.getTracer('t');
    const started: string[] = [];
    const counting: Tracer = {
      ...real,
      startSpan: (name, options, context) => (started.push(name), real.startSpan(name, options, context)),
    } as Tracer;
    const agent = agentWith([{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'x' } }] }, { text: 'ok' }], {
      tracer: counting,
    });
    const { result, events } = await finished(agent.prompt('go'));
    expectInvariants(events, result.messages);
    expect(started).toEqual(['invoke_agent']);
    expect(memory.getFinishedSpans()).toEqual([]);
    await provider.shutdown();
  });

  it('an in-memory agent is one conversation: its runs share a conversation id that no other agent has', async () => {
    const { provider, tree } = tracing();
    const tracer = provider.getTracer('t');
    const one = agentWith([{ text: 'a' }, { text: 'b' }], { tracer });
    const other = agentWith([{ text: 'c' }], { tracer });
    await one.prompt('1').result;
    await one.prompt('2').result;
    await other.prompt('3').result;
    const ids = tree().map((node) => node.attributes['gen_ai.conversation.id']);
    expect(ids).toHaveLength(3);
    expect(ids[0]).toEqual(expect.any(String));
    expect(ids[1]).toBe(ids[0]);
    expect(ids[2]).not.toBe(ids[0]);
    await provider.shutdown();
  });

  it.each([
    ['a tracer without startSpan', { tracer: {} as Tracer }],
    ['an empty name', { name: '' }],
  ])('%s is a typed InvalidOptions error', (_what, options) => {
    expect(() => otelObserver(options)).toThrow(AgentError);
    expect(() => otelObserver(options)).toThrow(expect.objectContaining({ code: 'InvalidOptions' }));
  });
});
