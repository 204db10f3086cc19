import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Subject } from 'rxjs';
import type { AgentEvent } from 'agentchart';
import { otelObserver } from 'agentchart/otel';
import { expectWork, timeAgentchart, type AgentExtras } from './drivers.js';
import { macrotask, median, sampled, type Sampled } from './stats.js';
import { turnsModel } from './workload.js';

/**
 * The cost of `otel: otelObserver()`: no observer; the observer with no SDK registered
 * (the API's no-op global: must cost nothing); the observer with the real SDK recording every span
 * (SimpleSpanProcessor into an InMemorySpanExporter, emptied between runs). Modes alternate per round.
 */

export type OtelMode = 'off' | 'noSdk' | 'sdk';

export interface OtelCost {
  unit: string;
  workload: string;
  /** Spans recorded per run with the SDK. */
  spansPerRun: number;
  /** The observer's own work per event with no SDK (a subscriber doing nothing subtracted), ns. */
  noSdkNsPerEvent: number;
  modes: Record<OtelMode, Sampled>;
  /** Mode median / off median, wall clock and process CPU time. */
  ratio: Record<Exclude<OtelMode, 'off'>, number>;
  cpuRatio: Record<Exclude<OtelMode, 'off'>, number>;
}

export async function otelCost(turns: number, calls: number, rounds: number, warmups: number): Promise<OtelCost> {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  // No global provider is registered in the bench process: otelObserver() gets the API's no-op tracer.
  const extras: Record<OtelMode, AgentExtras> = {
    off: {},
    noSdk: { otel: otelObserver() },
    sdk: { otel: otelObserver({ tracer: provider.getTracer('agentchart') }) },
  };
  const modes: OtelMode[] = ['off', 'noSdk', 'sdk'];
  const wall: Record<OtelMode, number[]> = { off: [], noSdk: [], sdk: [] };
  const cpu: Record<OtelMode, number[]> = { off: [], noSdk: [], sdk: [] };
  let spansPerRun = 0;
  for (let round = 0; round < warmups + rounds; round++) {
    const order = modes.map((_, i) => modes[(i + round) % modes.length] as OtelMode);
    for (const mode of order) {
      const run = await timeAgentchart(turnsModel(turns, calls), extras[mode]);
      expectWork(`otel ${mode}`, run, turns + 1, turns * calls);
      if (mode === 'sdk') {
        spansPerRun = memory.getFinishedSpans().length;
        memory.reset();
      }
      if (round >= warmups) {
        wall[mode].push((run.ms * 1000) / (turns + 1));
        cpu[mode].push(run.cpuMs);
      }
      await macrotask();
    }
  }
  await provider.shutdown();
  const expectedSpans = 1 + (turns + 1) * 2 + turns * calls;
  if (spansPerRun !== expectedSpans) {
    throw new Error(`bench otel: expected ${expectedSpans} spans per run, got ${spansPerRun}`);
  }
  const ratio = (samples: Record<OtelMode, number[]>, mode: OtelMode) =>
    Number((median(samples[mode]) / median(samples.off)).toFixed(2));
  return {
    unit: 'µs/turn',
    workload: `T=${turns} × K=${calls}`,
    spansPerRun,
    noSdkNsPerEvent: noSdkEventCost(200_000),
    modes: { off: sampled(wall.off), noSdk: sampled(wall.noSdk), sdk: sampled(wall.sdk) },
    ratio: { noSdk: ratio(wall, 'noSdk'), sdk: ratio(wall, 'sdk') },
    cpuRatio: { noSdk: ratio(cpu, 'noSdk'), sdk: ratio(cpu, 'sdk') },
  };
}

/** One run's events, minimal bodies: what the observer looks at when no SDK is registered. */
function runEvents(runId: string, turns: number): AgentEvent[] {
  const event = (body: object, seq: number) => ({ ...body, runId, seq }) as AgentEvent;
  const turn = (turnIndex: number) => [
    { type: 'turnStart', turnIndex },
    { type: 'beforeModelCall', turnIndex, model: 'm', messages: [] },
    { type: 'messageStart', turnIndex },
    { type: 'messageUpdate', turnIndex },
    { type: 'messageEnd', turnIndex },
    { type: 'toolExecutionStart', turnIndex, toolCallId: `c${turnIndex}`, toolName: 't', arguments: {} },
    { type: 'toolExecutionEnd', turnIndex, toolCallId: `c${turnIndex}`, toolName: 't', result: '', isError: false },
    { type: 'turnEnd', turnIndex, reason: 'toolsExecuted' },
  ];
  const bodies = [
    { type: 'agentStart' },
    ...Array.from({ length: turns }, (_, i) => turn(i)).flat(),
    { type: 'agentEnd' },
  ];
  return bodies.map(event);
}

/**
 * ns per event the observer adds with no SDK registered: events pushed through a Subject to the
 * observer, minus the same events to a subscriber that does nothing (best of 5).
 */
function noSdkEventCost(events: number): number {
  const turns = 100;
  const runs = Math.ceil(events / (turns * 8 + 2));
  const logs = Array.from({ length: runs }, (_, i) => runEvents(`run${i}`, turns));
  const time = (attach: (events: Subject<AgentEvent>) => void) => {
    let best = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 5; round++) {
      const subject = new Subject<AgentEvent>();
      attach(subject);
      const start = performance.now();
      for (const log of logs) for (const event of log) subject.next(event);
      best = Math.min(best, performance.now() - start);
    }
    return best;
  };
  const observer = otelObserver();
  const withObserver = time((events) => observer.attach({ events, sessionId: 'bench' }));
  const baseline = time((events) => events.subscribe(() => {}));
  const count = logs.reduce((sum, log) => sum + log.length, 0);
  return Number((((withObserver - baseline) * 1e6) / count).toFixed(1));
}
