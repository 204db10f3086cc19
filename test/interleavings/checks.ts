import { checkObserved } from '../../src/testing/observed/check.js';
import type { Observed, ObservedMessage, ObservedRun } from '../../src/testing/observed/types.js';
import type { Scenario } from './spec.js';
import type { WorldRecord } from './world.js';

/**
 * What must hold after every interleaving, whatever the order: the shared checker of
 * agentchart/testing (src/testing/observed), the same one exploreAgent and raceAgent run, fed
 * with what this driver observed.
 */

export type RunRecord = ObservedRun & {
  aborts: Array<{ at: number; moment: number; release: number }>;
  endedAtRelease: number | null;
};
export type SentMessage = ObservedMessage;

export interface CheckInput extends Omit<
  Observed,
  'world' | 'steeringInterrupts' | 'modelCallsPerTurn' | 'runs' | 'momentOf'
> {
  scenario: Scenario;
  momentOf: readonly number[];
  runs: readonly RunRecord[];
  record: WorldRecord;
  modelCount: number;
}

export function checkScenario(input: CheckInput): string[] {
  const { scenario, record, modelCount, ...observed } = input;
  return checkObserved({
    ...observed,
    world: record,
    steeringInterrupts: scenario.config.steeringInterrupts,
    modelCallsPerTurn: scenario.config.maxAttempts * modelCount + 1,
  });
}
