import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { AgentEvent, RunResult } from 'agentchart';
import { otelObserver, TRACER_NAME } from 'agentchart/otel';
import { expectCounters, expectInvariants, ofType } from '../support/harness.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';
import { runTracedSession, SESSION_ID } from './session-fixture.js';
import { fromOtlp, fromReadable, spanTree, timingProblems, type FlatSpan, type SpanNode } from './span-tree.js';

// OpenTelemetry: one session with retries, a fallback, parallel tools, steering, compaction, an approval
// and an abort, traced by the real SDK (registered globally) into its in-memory exporter and, at the
// same time, over OTLP/HTTP to a receiver on 127.0.0.1. Both trees are asserted whole.

const UNSET = { code: 'UNSET' } as const;
const error = (message?: string) => ({ code: 'ERROR' as const, ...(message ? { message } : {}) });

function chat(
  model: string,
  provider: string,
  attributes: Record<string, unknown>,
  status: SpanNode['status'],
): SpanNode {
  return {
    name: `chat ${model}`,
    kind: 'CLIENT',
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': model,
      'gen_ai.conversation.id': SESSION_ID,
      ...attributes,
    },
    events: [],
    status,
    children: [],
  };
}

function tool(
  name: string,
  id: string,
  status: SpanNode['status'],
  attributes: Record<string, unknown> = {},
): SpanNode {
  return {
    name: `execute_tool ${name}`,
    kind: 'INTERNAL',
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      'gen_ai.tool.call.id': id,
      'gen_ai.tool.type': 'function',
      ...attributes,
    },
    events: [],
    status,
    children: [],
  };
}

const replied = (input: number, output: number, extra: Record<string, unknown> = {}) => ({
  'gen_ai.response.model': 'beta',
  'gen_ai.response.finish_reasons': ['tool_call'],
  'gen_ai.usage.input_tokens': input,
  'gen_ai.usage.output_tokens': output,
  ...extra,
});

function expectedTree(runId: string): SpanNode[] {
  return [
    {
      name: 'invoke_agent releaser',
      kind: 'INTERNAL',
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'releaser',
        'gen_ai.conversation.id': SESSION_ID,
        'agentchart.run.id': runId,
        'agentchart.run.status': 'aborted',
        'agentchart.run.end_reason': 'aborted',
        'error.type': 'aborted',
      },
      events: [],
      status: error(),
      children: [
        {
          name: 'turn',
          kind: 'INTERNAL',
          attributes: { 'agentchart.turn.index': 0, 'agentchart.turn.end_reason': 'steeringInterrupt' },
          events: [
            {
              name: 'retry',
              attributes: {
                'agentchart.retry.attempt': 1,
                'agentchart.retry.delay_ms': 500,
                'error.type': 'rateLimit',
              },
            },
            {
              name: 'model_fallback',
              attributes: {
                'agentchart.fallback.from': 'alpha',
                'agentchart.fallback.to': 'beta',
                'error.type': 'overloaded',
              },
            },
          ],
          status: UNSET,
          children: [
            chat('alpha', 'anthropic', { 'error.type': 'rateLimit' }, error('slow down')),
            chat('alpha', 'anthropic', { 'error.type': 'overloaded' }, error('overloaded')),
            chat('beta', '_OTHER', replied(20, 5), UNSET),
            tool('search', 't1', UNSET),
            // Cut by steering after the grace period; its result text stays out (no content capture).
            tool('fetch', 't2', error(), { 'error.type': 'toolError' }),
          ],
        },
        {
          name: 'turn',
          kind: 'INTERNAL',
          attributes: { 'agentchart.turn.index': 1, 'agentchart.turn.end_reason': 'aborted', 'error.type': 'aborted' },
          events: [
            { name: 'steering', attributes: { 'agentchart.steering.delivered': 1 } },
            {
              name: 'context_compacted',
              attributes: {
                'agentchart.context.messages_before': 5,
                'agentchart.context.messages_after': 3,
                'agentchart.context.tokens_before': expect.any(Number),
                'agentchart.context.tokens_after': expect.any(Number),
              },
            },
            {
              name: 'tool_approval_requested',
              attributes: { 'gen_ai.tool.name': 'deploy', 'gen_ai.tool.call.id': 't3' },
            },
            {
              name: 'tool_approval_resolved',
              attributes: {
                'gen_ai.tool.name': 'deploy',
                'gen_ai.tool.call.id': 't3',
                'agentchart.approval.approved': true,
              },
            },
          ],
          status: error(),
          children: [
            chat('beta', '_OTHER', { 'error.type': 'contextOverflow' }, error('context overflow')),
            // input_tokens counts cached input too (the conventions' meaning).
            chat('beta', '_OTHER', replied(42, 6, { 'gen_ai.usage.cache_read.input_tokens': 12 }), UNSET),
            tool('deploy', 't3', error(), { 'error.type': 'toolError' }),
          ],
        },
      ],
    },
  ];
}

describe('OpenTelemetry: span tree of one session, in memory and over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let memory: InMemorySpanExporter;
  let provider: BasicTracerProvider;
  let session: { result: RunResult; events: AgentEvent[]; runId: string };

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    memory = new InMemorySpanExporter();
    provider = new BasicTracerProvider({
      spanProcessors: [
        new SimpleSpanProcessor(memory),
        new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver.url })),
      ],
    });
    // The real SDK, registered globally: otelObserver() without a tracer uses the global provider.
    trace.setGlobalTracerProvider(provider);
    session = await runTracedSession(otelObserver({ name: 'releaser' }));
    await provider.forceFlush();
  });

  afterAll(async () => {
    trace.disable();
    await provider.shutdown();
    await receiver.close();
  });

  it('the session itself: invariants hold and every counter agrees', () => {
    const { result, events } = session;
    expect(result).toMatchObject({ status: 'aborted', endReason: 'aborted' });
    expectInvariants(events, result.messages);
    expectCounters(result.counters, {
      turns: 2,
      modelCalls: 5,
      retries: 1,
      modelFallbacks: 1,
      overflowRecoveries: 1,
      toolCallsRequested: 3,
      toolCallsExecuted: 3,
      toolCallsFailed: 2,
      steeringDelivered: 1,
      approvalsRequested: 1,
      tokensIn: 50,
      tokensOut: 11,
      tokensCacheRead: 12,
      backoffMs: 500,
      failureCodes: { rateLimit: 1, overloaded: 1, contextOverflow: 1 },
    });
    // The fields the observer reads, added to the events for it.
    expect(ofType(events, 'modelFallback').map((e) => e.error?.kind)).toEqual(['overloaded']);
    expect(ofType(events, 'turnStart').map((e) => e.steeringDelivered)).toEqual([undefined, 1]);
    expect(ofType(events, 'beforeModelCall').map((e) => e.provider)).toEqual([
      'anthropic',
      'anthropic',
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('the in-memory exporter holds exactly the expected tree (names, parents, kinds, attributes, events)', () => {
    const spans = memory.getFinishedSpans();
    expect(spans.every((span) => span.instrumentationScope.name === TRACER_NAME)).toBe(true);
    const flat = spans.map(fromReadable);
    expect(new Set(flat.map((span) => span.traceId)).size).toBe(1);
    expect(timingProblems(flat)).toEqual([]);
    expect(spanTree(flat)).toEqual(expectedTree(session.runId));
  });

  it('the OTLP/HTTP receiver decodes the same tree, with the same ids', () => {
    expect(receiver.rejected).toEqual([]);
    expect(receiver.spans.every((span) => span.scope === TRACER_NAME)).toBe(true);
    const received = receiver.spans.map(fromOtlp);
    const byId = (spans: FlatSpan[]) => new Map(spans.map((span) => [span.spanId, span.parentId]));
    expect(byId(received)).toEqual(byId(memory.getFinishedSpans().map(fromReadable)));
    expect(timingProblems(received)).toEqual([]);
    expect(spanTree(received)).toEqual(expectedTree(session.runId));
  });
});
