import {
  chainOf,
  forkTargetExists,
  historyAsOf,
  keyframeRow,
  replayStepRecords,
  sessionNotFound,
  StepRecorder,
  stepNotRecorded,
  withCurrentStep,
  type ReplacedMessage,
  type StepRecordRow,
} from './step-records.js';
import type { StepCheckpoint, StepSummary } from './step-types.js';
import type { SessionStep } from './types.js';
import { assembleCheckpoint, parseHead, parseMessage } from './validate.js';

/** A memory session's per-step records and the messages its steps replaced. */
export interface MemoryStepLog {
  records: Array<StepSummary & StepRecordRow>;
  replaced: ReplacedMessage[];
}

interface MemorySession {
  head: string;
  version: number;
  messages: string[];
  events: string[];
  running: boolean;
  updatedAt: number;
  steps: MemoryStepLog;
}

/** Time travel for memoryStore(): the same records the durable stores keep, in arrays. */
export function memorySteps(sessions: Map<string, MemorySession>) {
  const recorder = new StepRecorder();
  const sessionOf = (sessionId: string) => {
    const session = sessions.get(sessionId);
    if (!session || session.version < 0) throw sessionNotFound(sessionId);
    return session;
  };
  const currentOf = (session: MemorySession): StepSummary => ({
    version: session.version,
    events: session.events.length,
    historyLength: session.messages.length,
    committedAt: session.updatedAt,
  });
  const load = (sessionId: string, version: number): StepCheckpoint | null => {
    const session = sessions.get(sessionId);
    if (!session || session.version < 0) return null;
    const chain = chainOf(session.steps.records, version);
    if (!chain) {
      if (version !== session.version) return null;
      const head = parseHead(sessionId, session.head);
      const history = session.messages.map((json, position) => parseMessage(sessionId, json, position));
      return { ...currentOf(session), checkpoint: assembleCheckpoint(sessionId, head, history), machines: null };
    }
    const summary = chain.at(-1) as StepSummary & StepRecordRow;
    const { head, machines } = replayStepRecords(sessionId, chain, summary);
    const history = historyAsOf(sessionId, session.messages, session.steps.replaced, version, summary.historyLength);
    return {
      version,
      events: summary.events,
      historyLength: summary.historyLength,
      committedAt: summary.committedAt,
      checkpoint: assembleCheckpoint(
        sessionId,
        head,
        history.map((json, position) => parseMessage(sessionId, json, position)),
      ),
      machines,
    };
  };
  return {
    /** Called with the session as it is before the step changes it. */
    record(sessionId: string, session: MemorySession, step: SessionStep, committedAt: number): void {
      const log = session.steps;
      const last = log.records.at(-1);
      const row = recorder.encode(sessionId, step, last ?? null, committedAt);
      const { version } = step.checkpoint;
      for (let position = step.history.from; position < session.messages.length; position++) {
        log.replaced.push({ position, replacedAt: version, message: session.messages[position] as string });
      }
      log.records.push({
        ...row,
        events: session.events.length + step.events.length,
        historyLength: step.checkpoint.historyLength,
        committedAt,
      });
    },
    forget: (sessionId: string) => recorder.forget(sessionId),
    list(sessionId: string): StepSummary[] {
      const session = sessions.get(sessionId);
      if (!session || session.version < 0) return [];
      const recorded = session.steps.records.map(({ version, events, historyLength, committedAt }) => ({
        version,
        events,
        historyLength,
        committedAt,
      }));
      return withCurrentStep(recorded, currentOf(session));
    },
    load,
    fork(from: string, to: string, version: number): void {
      const source = sessionOf(from);
      if (sessions.has(to)) throw forkTargetExists(to);
      const at = load(from, version);
      if (!at) throw stepNotRecorded(from, version);
      const { history, ...rest } = at.checkpoint;
      const records = source.steps.records.filter((row) => row.version <= version);
      if (records.at(-1)?.version !== version) {
        records.push({ ...keyframeRow({ ...rest, historyLength: history.length }, at.machines), ...summaryOf(at) });
      }
      sessions.set(to, {
        head: JSON.stringify({ ...rest, sessionId: to, historyLength: history.length }),
        version,
        messages: history.map((message) => JSON.stringify(message)),
        events: source.events.slice(0, at.events),
        running: rest.run !== null,
        updatedAt: Date.now(),
        steps: {
          records: records.map((row) => ({ ...row })),
          replaced: source.steps.replaced.filter((entry) => entry.replacedAt <= version),
        },
      });
      recorder.forget(to);
    },
  };
}

const summaryOf = (at: StepSummary): StepSummary => ({
  version: at.version,
  events: at.events,
  historyLength: at.historyLength,
  committedAt: at.committedAt,
});
