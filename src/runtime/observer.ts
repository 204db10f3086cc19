import type { Observable } from 'rxjs';
import type { AgentEvent } from '../domain/events.js';

/** What an observer (e.g. `otelObserver()` from agentchart/otel) is given about the agent it watches. */
export interface ObservedAgent {
  /** Every run's events, live; a run resumed after a restart continues its runId without a second agentStart. */
  readonly events: Observable<AgentEvent>;
  /** The durable session's id, when the agent has one. */
  readonly sessionId?: string;
  /** The agent's system prompt (recorded only when the observer captures content). */
  readonly systemPrompt?: string;
}

/**
 * Watches an agent from its creation on (the `otel` option of createAgent). The core knows only
 * this shape, so an observer's SDK stays an optional peer of its own entry point.
 */
export interface AgentObserver {
  /** Called once by `createAgent`, before the session loads: subscribe to the agent's events here. */
  attach(agent: ObservedAgent): void;
}
