import type { AgentObserver } from '../index.js';
import { otelObserver } from '../otel.js';

/** `npm run demo -- --otel`: the session's OpenTelemetry spans, printed by the SDK's ConsoleSpanExporter. */

export interface DemoTracing {
  otel?: AgentObserver;
  /** Prints the spans (after the transcript, so the two do not interleave) and shuts the SDK down. */
  finish(): Promise<void>;
}

export const OTEL_FLAG = '--otel';

export async function tracingForDemo(argv: readonly string[], say: (line: string) => void): Promise<DemoTracing> {
  if (!argv.includes(OTEL_FLAG)) return { finish: async () => {} };
  // Loaded only with the flag: the demo needs no OpenTelemetry package otherwise.
  const sdk = await import('@opentelemetry/sdk-trace-base');
  // One export at the end: a delay longer than any demo session.
  const exporter = new sdk.ConsoleSpanExporter();
  const processor = new sdk.BatchSpanProcessor(exporter, { scheduledDelayMillis: 600_000, maxExportBatchSize: 1_000 });
  const provider = new sdk.BasicTracerProvider({ spanProcessors: [processor] });
  return {
    otel: otelObserver({ tracer: provider.getTracer('agentchart'), name: 'demo-coder' }),
    async finish() {
      say('\nOpenTelemetry spans (ConsoleSpanExporter; send them anywhere with an OTLP exporter, see the README):');
      await provider.shutdown();
    },
  };
}
