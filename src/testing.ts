// Test helpers: import from 'agentchart/testing'.
export {};
export { scriptedModel } from './testing/scripted-model.js';
export type {
  ScriptedModel,
  ScriptedModelOptions,
  ScriptEntry,
  ScriptedToolCall,
  Script,
  RecordedRequest,
  ScriptOverrun,
} from './testing/scripted-model.js';
export type { Clock } from './testing/clock.js';
export { assertInvariants, checkInvariants, eventTypes, InvariantViolationError } from './testing/check-invariants.js';
export type { InvariantReport } from './testing/check-invariants.js';
export { exploreAgent, assertAgent, AgentCheckError } from './testing/explore/explore.js';
export { describeLog } from './testing/explore/describe.js';
export type {
  AgentUnderTest,
  ExploreOptions,
  ExploreResult,
  Interruption,
  PathInfo,
  Property,
  Replies,
  Step,
  Violation,
} from './testing/explore/types.js';
export { writeTrace } from './testing/explore/trace.js';
export { raceAgent } from './testing/race/race.js';
export type { RaceOptions, RaceResult } from './testing/race/race.js';
export { approvedArguments, ranOnlyAsApproved } from './testing/explore/properties.js';
