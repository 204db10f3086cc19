// Run by missing-peer.test.ts with @opentelemetry/api hidden: the core and the agentchart/otel entry
// load; otelObserver() is where the missing peer is reported.
import { createAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing.js';

const report: Record<string, unknown> = {};
const agent = createAgent({ model: scriptedModel([{ text: 'fine without OpenTelemetry' }]) });
report.core = (await agent.prompt('hi').result).status;
const otel = await import('../../src/otel.js');
report.entryLoaded = typeof otel.otelObserver === 'function';
try {
  otel.otelObserver();
  report.error = null;
} catch (error) {
  const { name, code, message } = error as { name: string; code?: string; message: string };
  report.error = { name, code, message };
}
console.log(JSON.stringify(report));
