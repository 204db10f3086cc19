import type { Batch, Execution, PreparedCall } from './turn.types.js';

/**
 * The pool's arithmetic, pure: which prepared calls start now, and what is left. A batch runs its
 * groups in order; inside a group at most `limit` calls run at once. The turn's chart decides when
 * (on entering `running` and whenever a call finishes); these functions only count.
 */

/** Groups for a fixed strategy: everything at once, one at a time, or a pool of `limit`. */
export function fixedGroups(execution: Execution, count: number): { groups: number[][]; limit: number } {
  const all = Array.from({ length: count }, (_, index) => index);
  switch (execution.kind) {
    case 'sequential':
      return { groups: all.map((index) => [index]), limit: 1 };
    case 'pool':
      return { groups: [all], limit: execution.limit };
    default:
      return { groups: [all], limit: Number.POSITIVE_INFINITY };
  }
}

/** A new batch, with the calls it starts at once. */
export function openBatch(groups: number[][], limit: number): Batch {
  return fill({ groups, group: 0, next: 0, running: 0, limit });
}

/** After one call finished: the batch, with the calls that start in its place. */
export function afterCallFinished(batch: Batch): Batch {
  return fill({ ...batch, running: batch.running - 1 });
}

/** Starts calls until the pool is full; a group opens only once the one before has drained. */
function fill(batch: Omit<Batch, 'starting'>): Batch {
  let { group, next, running } = batch;
  const starting: number[] = [];
  for (;;) {
    const members = batch.groups[group];
    if (!members) break;
    if (next >= members.length) {
      if (running > 0) break;
      group += 1;
      next = 0;
      continue;
    }
    if (running >= batch.limit) break;
    starting.push(members[next] as number);
    next += 1;
    running += 1;
  }
  return { ...batch, group, next, running, starting };
}

/** True when the call finishing now is the last one: nothing runs after it and nothing is left to start (no batch: none). */
export function finishesBatch(batch: Batch | null): boolean {
  return batch?.running === 1 && afterCallFinished(batch).starting.length === 0;
}

/** The prepared-call indices whose tool-call actor was created so far, in that order. */
export function dispatchedIndices(batch: Batch | null): number[] {
  if (!batch) return [];
  const started: number[] = [];
  batch.groups.forEach((members, group) => {
    if (group < batch.group) started.push(...members);
    else if (group === batch.group) started.push(...members.slice(0, batch.next));
  });
  return started;
}

/** The tool-call actor id of a prepared call (by its position among the assistant's calls). */
export function callActorId(entry: Pick<PreparedCall, 'position'>): string {
  return `call.${entry.position}`;
}

/** The system id of a turn's tool-call actor: how the turn reaches it to cancel or hold it. */
export function callSystemId(turnSessionId: string, entry: Pick<PreparedCall, 'position'>): string {
  return `${turnSessionId}.${callActorId(entry)}`;
}
