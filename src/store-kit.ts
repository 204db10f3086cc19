// agentchart/store-kit: for authors of a SessionStore. The checks every store makes (memoryStore,
// sqliteStore and postgresStore use exactly these), the lease rules, and the stored shapes as zod schemas.
export type {
  SessionStore,
  SessionSummary,
  SessionStep,
  SessionCheckpoint,
  SessionHead,
  RunCheckpoint,
  TurnCheckpoint,
  PendingApproval,
  HistoryChange,
  HistoryRef,
  StoredEvent,
  StoreOptions,
  TimeTravelStore,
} from './store/types.js';
export {
  SessionCheckpointSchema,
  SessionHeadSchema,
  HistoryChangeSchema,
  HistoryRefSchema,
  StoredEventSchema,
} from './store/types.js';
export { MessageSchema } from './domain/messages.js';
export { AgentEventSchema } from './domain/events.js';

// Step records: what a store keeps per step for time travel and forks (steps, loadStep, fork): a
// keyframe or a patch per step, and the messages a step replaced, as the stores of agentchart keep them.
export { StepMachinesSchema } from './store/step-types.js';
export type { StepCheckpoint, StepMachines, StepSummary } from './store/step-types.js';
export {
  StepRecorder,
  replayStepRecords,
  historyAsOf,
  chainOf,
  keyframeRow,
  withCurrentStep,
  MAX_CHAIN,
} from './store/step-records.js';
export type { StepRecordRow, StepRowTag, ReplacedMessage } from './store/step-records.js';

// Validation: what a store reads back is parsed, and a step is checked before it is written.
export {
  assembleCheckpoint,
  checkStep,
  expandEvents,
  parseHead,
  parseMessage,
  parseStoredEvent,
} from './store/validate.js';

// One owner per session: leases with fencing tokens.
export type { Lease, AcquiredLease, LeaseHolder } from './store/lease.js';
export { acquireLease, renewLease, releasedLease, checkFence, sessionBusy } from './store/lease.js';
