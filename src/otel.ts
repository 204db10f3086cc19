// agentchart/otel: OpenTelemetry spans per the GenAI semantic conventions. `@opentelemetry/api` is
// an optional peer dependency, loaded only by this entry point.
export { otelObserver, TRACER_NAME } from './otel/observer.js';
export type { OtelObserverOptions } from './otel/observer.js';
export {
  AGENTCHART as AGENTCHART_ATTRIBUTES,
  GEN_AI as GEN_AI_ATTRIBUTES,
  SPAN_EVENT as SPAN_EVENTS,
} from './otel/attributes.js';
