import type { AgentEvent } from '../domain/events.js';
import type { SessionStore, SessionSummary } from './types.js';
import { parseCheckpoint, parseEvent, staleVersion } from './validate.js';

/**
 * An in-memory store with the same semantics as the durable ones: it keeps serialized JSON, so a
 * resumed agent never shares objects with the one that wrote the session.
 */
export function memoryStore(): SessionStore & Required<Pick<SessionStore, 'commitStepSync'>> {
  const sessions = new Map<string, { checkpoint: string; events: string[]; version: number; running: boolean; updatedAt: number }>();
  const store: SessionStore & Required<Pick<SessionStore, 'commitStepSync'>> = {
    async load(sessionId) {
      const session = sessions.get(sessionId);
      return session ? parseCheckpoint(sessionId, session.checkpoint) : null;
    },
    async commitStep(sessionId, step) {
      store.commitStepSync(sessionId, step);
    },
    commitStepSync(sessionId, { checkpoint, events }) {
      const session = sessions.get(sessionId);
      const stored = session?.version ?? -1;
      if (checkpoint.version !== stored + 1) throw staleVersion(sessionId, stored, checkpoint.version);
      sessions.set(sessionId, {
        checkpoint: JSON.stringify(checkpoint),
        events: [...(session?.events ?? []), ...events.map((event) => JSON.stringify(event))],
        version: checkpoint.version,
        running: checkpoint.run !== null,
        updatedAt: Date.now(),
      });
    },
    async loadEvents(sessionId): Promise<AgentEvent[]> {
      return (sessions.get(sessionId)?.events ?? []).map((json) => parseEvent(sessionId, json));
    },
    async list(): Promise<SessionSummary[]> {
      return [...sessions].map(([sessionId, s]) => ({ sessionId, version: s.version, running: s.running, updatedAt: s.updatedAt }));
    },
    async delete(sessionId) {
      sessions.delete(sessionId);
    },
  };
  return store;
}
