import { describe, expect, it } from 'vitest';
import {
  afterCallFinished,
  callActorId,
  callSystemId,
  dispatchedIndices,
  finishesBatch,
  fixedGroups,
  openBatch,
} from '../../machines/turn.batch.js';

/** The pool's arithmetic: which calls start, in which order, and when the batch is over. */

describe('turn batch', () => {
  it('fixed strategies: one group at once, one call at a time, or a pool of its limit', () => {
    expect(fixedGroups({ kind: 'parallel' }, 3)).toEqual({ groups: [[0, 1, 2]], limit: Number.POSITIVE_INFINITY });
    expect(fixedGroups({ kind: 'sequential' }, 3)).toEqual({ groups: [[0], [1], [2]], limit: 1 });
    expect(fixedGroups({ kind: 'pool', limit: 2 }, 3)).toEqual({ groups: [[0, 1, 2]], limit: 2 });
  });

  it('a pool of two over three calls: two start, the third takes the first free place, the last one finishes it', () => {
    const open = openBatch([[0, 1, 2]], 2);
    expect(open).toMatchObject({ starting: [0, 1], running: 2, group: 0, next: 2 });
    expect(dispatchedIndices(open)).toEqual([0, 1]);
    expect(finishesBatch(open)).toBe(false);
    const second = afterCallFinished(open);
    expect(second).toMatchObject({ starting: [2], running: 2 });
    expect(dispatchedIndices(second)).toEqual([0, 1, 2]);
    const third = afterCallFinished(second);
    expect(third).toMatchObject({ starting: [], running: 1 });
    expect(finishesBatch(second)).toBe(false);
    expect(finishesBatch(third)).toBe(true);
  });

  it('no batch: no call finishes one', () => {
    expect(finishesBatch(null)).toBe(false);
  });

  it('groups run in order: the next group opens only once the one before has drained', () => {
    const open = openBatch(
      [
        [0, 1],
        [2, 3],
      ],
      Number.POSITIVE_INFINITY,
    );
    expect(open).toMatchObject({ starting: [0, 1], group: 0 });
    expect(dispatchedIndices(open)).toEqual([0, 1]);
    const one = afterCallFinished(open);
    expect(one).toMatchObject({ starting: [], running: 1, group: 0 });
    const two = afterCallFinished(one);
    expect(two).toMatchObject({ starting: [2, 3], running: 2, group: 1, next: 2 });
    expect(dispatchedIndices(two)).toEqual([0, 1, 2, 3]);
    const sequential = openBatch([[0], [1], [2]], 1);
    expect(dispatchedIndices(afterCallFinished(sequential))).toEqual([0, 1]);
    expect(dispatchedIndices(null)).toEqual([]);
  });

  it('tool-call actors are named by position, in the turn’s system by its session id', () => {
    expect(callActorId({ position: 2 })).toBe('call.2');
    expect(callSystemId('x:1', { position: 2 })).toBe('x:1.call.2');
  });
});
