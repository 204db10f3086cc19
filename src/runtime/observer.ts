import type { Observable } from 'rxjs';
import type { AgentEvent } from '../domain/events.js';

/** What an observer (e.g. `otelObserver()` from agentchart/otel) is given about the agent it watches. */
export interface ObservedAgent {
  /** Every run's events, live; a run resumed after a restart continues its runId without a second agentStart. */
  readonly events: Observable<AgentEvent>;
  /** The durable session's id, when the agent has one. */
  readonly sessionId?: string;
  readonly systemPrompt?: string;
}

/**
 * Watches an agent from its creation on (the `otel` option of createAgent). The core knows only
 * this shape, so an observer's SDK stays an optional peer of its own entry point.
 */
export interface AgentObserver {
  attach(agent: ObservedAgent): void;
}
