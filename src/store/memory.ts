import type { AgentEvent } from '../domain/events.js';
import { acquireLease, releasedLease, renewLease, type Lease } from './lease.js';
import { memorySteps, type MemoryStepLog } from './memory-steps.js';
import type { SessionStore, SessionSummary, StoreOptions, TimeTravelStore } from './types.js';
import { assembleCheckpoint, checkStep, expandEvents, parseHead, parseMessage, parseStoredEvent } from './validate.js';

interface StoredSession {
  head: string;
  version: number;
  messages: string[];
  events: string[];
  running: boolean;
  updatedAt: number;
  /** The per-step records (time travel, fork). */
  steps: MemoryStepLog;
}

/** A store in this process: it answers at once, so a run starts (or is refused) inside `prompt()`. */
type EmbeddedStore = TimeTravelStore & Required<Pick<SessionStore, 'commitStepSync' | 'acquireSync' | 'loadSync'>>;

/**
 * An in-memory store with the same semantics as the durable ones: it keeps serialized JSON, so a
 * resumed agent never shares objects with the one that wrote the session.
 */
export function memoryStore(options: StoreOptions = {}): EmbeddedStore {
  const now = options.now ?? Date.now;
  const sessions = new Map<string, StoredSession>();
  const leases = new Map<string, Lease>();
  const historyOf = (sessionId: string, session: StoredSession) =>
    session.messages.map((json, position) => parseMessage(sessionId, json, position));
  const steps = memorySteps(sessions);
  const store: EmbeddedStore = {
    async load(sessionId) {
      return store.loadSync(sessionId);
    },
    loadSync(sessionId) {
      const session = sessions.get(sessionId);
      return session
        ? assembleCheckpoint(sessionId, parseHead(sessionId, session.head), historyOf(sessionId, session))
        : null;
    },
    async versionOf(sessionId) {
      return sessions.get(sessionId)?.version ?? -1;
    },
    async commitStep(sessionId, step) {
      store.commitStepSync(sessionId, step);
    },
    commitStepSync(sessionId, step) {
      const session = sessions.get(sessionId) ?? {
        head: '',
        version: -1,
        messages: [],
        events: [],
        running: false,
        updatedAt: 0,
        steps: { records: [], replaced: [] },
      };
      checkStep(
        sessionId,
        { version: session.version, historyLength: session.messages.length, lease: leases.get(sessionId) ?? null },
        step,
      );
      // Serialized before anything changes: a step is all or nothing.
      const head = JSON.stringify(step.checkpoint);
      const messages = step.history.messages.map((message) => JSON.stringify(message));
      const events = step.events.map((event) => JSON.stringify(event));
      const committedAt = Date.now();
      steps.record(sessionId, session, step, committedAt);
      session.messages.length = step.history.from;
      for (const message of messages) session.messages.push(message);
      for (const event of events) session.events.push(event);
      Object.assign(session, {
        head,
        version: step.checkpoint.version,
        running: step.checkpoint.run !== null,
        updatedAt: committedAt,
      });
      sessions.set(sessionId, session);
    },
    async loadEvents(sessionId, options): Promise<AgentEvent[]> {
      const session = sessions.get(sessionId);
      if (!session) return [];
      const stored = session.events.slice(options?.from ?? 0).map((json) => parseStoredEvent(sessionId, json));
      return expandEvents(sessionId, stored, () => historyOf(sessionId, session));
    },
    async list(): Promise<SessionSummary[]> {
      return [...sessions].map(([sessionId, s]) => ({
        sessionId,
        version: s.version,
        running: s.running,
        updatedAt: s.updatedAt,
      }));
    },
    async delete(sessionId) {
      sessions.delete(sessionId);
      steps.forget(sessionId);
    },
    loadEventsJson: async (sessionId, options) => sessions.get(sessionId)?.events.slice(options?.from ?? 0) ?? [],
    steps: async (sessionId) => steps.list(sessionId),
    loadStep: async (sessionId, version) => steps.load(sessionId, version),
    fork: async (from, to, version) => steps.fork(from, to, version),
    async acquire(sessionId, owner, ttlMs, holder) {
      return store.acquireSync(sessionId, owner, ttlMs, holder);
    },
    acquireSync(sessionId, owner, ttlMs, holder) {
      const lease = acquireLease(sessionId, leases.get(sessionId) ?? null, owner, ttlMs, now(), holder);
      leases.set(sessionId, lease);
      return { ...lease, version: sessions.get(sessionId)?.version ?? -1 };
    },
    async renew(sessionId, lease, ttlMs) {
      const renewed = renewLease(sessionId, leases.get(sessionId) ?? null, lease, ttlMs, now());
      leases.set(sessionId, renewed);
      return { ...renewed };
    },
    async release(sessionId, lease) {
      const released = releasedLease(leases.get(sessionId) ?? null, lease, now());
      if (released) leases.set(sessionId, released);
    },
  };
  return store;
}
