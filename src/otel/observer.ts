import type { Tracer } from '@opentelemetry/api';
import { AgentError } from '../domain/errors.js';
import type { AgentObserver } from '../runtime/observer.js';
import { loadOtelApi } from './api.js';
import { RunSpans, type TraceSettings } from './run-spans.js';

export interface OtelObserverOptions {
  /** The tracer to use; default: `trace.getTracer('agentchart')` of the globally registered provider. */
  tracer?: Tracer;
  /** The agent's name: spans `invoke_agent <name>` and `gen_ai.agent.name`. */
  name?: string;
  /** Record message content (prompts, replies, tool arguments and results). Off by default: it may be sensitive. */
  captureContent?: boolean;
}

export const TRACER_NAME = 'agentchart';

/**
 * OpenTelemetry spans per the GenAI semantic conventions, derived from the agent's own events:
 * `createAgent({ otel: otelObserver() })`. With no SDK registered (or a run not sampled) a run
 * records nothing beyond one non-recording span.
 */
export function otelObserver(options: OtelObserverOptions = {}): AgentObserver {
  if (options.tracer !== undefined && typeof options.tracer?.startSpan !== 'function') {
    throw new AgentError('InvalidOptions', 'otelObserver: `tracer` must be an OpenTelemetry Tracer (with startSpan).');
  }
  if (options.name !== undefined && (typeof options.name !== 'string' || options.name === '')) {
    throw new AgentError('InvalidOptions', 'otelObserver: `name` must be a non-empty string.');
  }
  const api = loadOtelApi();
  const tracer = options.tracer ?? api.trace.getTracer(TRACER_NAME);
  return {
    attach(agent) {
      const settings: TraceSettings = {
        api,
        tracer,
        agentName: options.name,
        // A durable session keeps its conversation across restarts; an in-memory agent is one conversation.
        conversationId: agent.sessionId ?? globalThis.crypto.randomUUID(),
        captureContent: options.captureContent === true,
        systemPrompt: agent.systemPrompt,
      };
      // null: a run that records nothing (not sampled, or no SDK registered).
      const runs = new Map<string, RunSpans | null>();
      agent.events.subscribe((event) => {
        let run = runs.get(event.runId);
        if (run === undefined) {
          run = RunSpans.open(settings, event);
          runs.set(event.runId, run);
        }
        const ended = run === null ? event.type === 'agentEnd' : run.handle(event);
        if (ended) runs.delete(event.runId);
      });
    },
  };
}
