import { z } from 'zod';
import { ActorStatusSchema, StateValueSchema } from '../trace/format.js';
import type { SessionCheckpoint } from './types.js';

/**
 * The charts' active states when a step was taken: the master's, the open turn's and its tool
 * calls'. Stored with each step, so time travel over a stored session lights the states it was in.
 */
export const StepMachinesSchema = z.object({
  /** Null between runs. */
  master: StateValueSchema.nullable(),
  turn: z
    .object({ turnIndex: z.number().int().nonnegative(), value: StateValueSchema, status: ActorStatusSchema })
    .nullable(),
  calls: z.array(z.object({ id: z.string(), name: z.string(), value: StateValueSchema, status: ActorStatusSchema })),
});
export type StepMachines = z.infer<typeof StepMachinesSchema>;

/** One committed step as time travel lists it. */
export interface StepSummary {
  version: number;
  /** How many of the session's events were stored once this step was (its events are the last ones). */
  events: number;
  historyLength: number;
  /** When the step was written (ms since the epoch, the writer's clock). */
  committedAt: number;
}

/** The session as a step left it: its checkpoint (history as it was then) and the charts' states. */
export interface StepCheckpoint extends StepSummary {
  checkpoint: SessionCheckpoint;
  /** Null for a step written before step records existed (its checkpoint comes from the session's head). */
  machines: StepMachines | null;
}
