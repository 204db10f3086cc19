import type { Message } from '../domain/messages.js';
import type { SessionStore } from '../store/types.js';
import type { StepMachines } from '../store/step-types.js';
import type { Agent, DurableOptions } from './agent.js';
import type { AgentState } from './run-session.js';
import { machinesOf } from './step-machines.js';
import { sessionView } from './checkpoint.js';

/**
 * What a tool watching an agent (the studio) reads beyond the public API, all of it read-only:
 * the session it is stored as, the charts' states now, and the queued messages. Everything that
 * acts on the agent goes through its public API.
 */
export interface AgentTap {
  readonly sessionId: string | null;
  readonly store: SessionStore | null;
  /** The charts' active states now (the run's master, its turn, the turn's tool calls). */
  machines(): StepMachines;
  /** Steering and follow-up messages not yet delivered (the run's queues while one is in progress). */
  queues(): { steering: readonly Message[]; followUp: readonly Message[] };
  /** A run is in progress. */
  readonly running: boolean;
  /** Resolves once the agent was closed (and let its session go). */
  readonly closed: Promise<void>;
}

const states = new WeakMap<Agent, { state: AgentState; closed: Promise<void> }>();

export function tapAgent(agent: Agent, state: AgentState, closed: Promise<void>): void {
  states.set(agent, { state, closed });
}

/** The tap of an agent made by createAgent, or null for any other object. */
export function agentTap(agent: Agent): AgentTap | null {
  const tapped = states.get(agent);
  if (!tapped) return null;
  const { state, closed } = tapped;
  return {
    closed,
    sessionId: (state.options as DurableOptions).sessionId ?? null,
    store: (state.options as DurableOptions).store ?? null,
    machines: () => machinesOf(state.run),
    queues() {
      const view = sessionView(state);
      return { steering: view.steeringQueue, followUp: view.followUpQueue };
    },
    get running() {
      return state.run !== null;
    },
  };
}
