import { describe, expect, expectTypeOf, it } from 'vitest';
import type { AnyStateMachine } from 'xstate';
import { masterMachine } from '../../machines/master.machine.js';
import { turnMachine } from '../../machines/turn.machine.js';
import type { RuntimeImplementations } from '../../src/runtime/machine-names.js';
import { masterLogic, type MasterOwnActions } from '../../src/runtime/master-effects.js';
import type { TurnOwnActions } from '../../src/runtime/turn-effects.js';

/**
 * The runtime's implementations are checked against the names the machines' types list (a missing
 * or misspelled effect does not compile); this checks the same from the values: every placeholder
 * a machine leaves (an effect that throws "the runtime must provide …") is replaced.
 */

type Implementations = Record<string, unknown>;

/** A placeholder action: a plain function (XState's own actions carry `resolve`) that says it must be provided. */
function isPlaceholder(action: unknown): boolean {
  if (typeof action !== 'function' || 'resolve' in action) return false;
  try {
    (action as (args: unknown, params: unknown) => unknown)({}, {});
  } catch (error) {
    return String(error).includes('the runtime must provide');
  }
  return false;
}

function replaced(original: AnyStateMachine, provided: AnyStateMachine, kind: 'actions' | 'actors'): string[] {
  const before = original.implementations[kind] as Implementations;
  const after = provided.implementations[kind] as Implementations;
  return Object.keys(before).filter((name) => after[name] !== before[name]);
}

const providedMaster = masterLogic();
const providedTurn = (providedMaster.implementations.actors as Implementations).turn as AnyStateMachine;

describe('the effects the runtime provides', () => {
  it.each([
    ['master', masterMachine, providedMaster],
    ['turn', turnMachine, providedTurn],
  ] as const)('replace every placeholder of the %s machine, and every actor', (_, original, provided) => {
    const placeholders = Object.entries(original.implementations.actions as Implementations)
      .filter(([, action]) => isPlaceholder(action))
      .map(([name]) => name);
    expect(placeholders.length).toBeGreaterThan(0);
    expect(replaced(original, provided, 'actions')).toEqual(expect.arrayContaining(placeholders));
    expect(replaced(original, provided, 'actors')).toEqual(Object.keys(original.implementations.actors));
    // Guards and delays are the machines' own (pure): the runtime replaces none.
    expect(provided.implementations.guards).toEqual(original.implementations.guards);
    expect(provided.implementations.delays).toEqual(original.implementations.delays);
  });

  it('are exactly the names the types leave to the runtime', () => {
    const turnActions = replaced(turnMachine, providedTurn, 'actions');
    const masterActions = replaced(masterMachine, providedMaster, 'actions');
    type TurnNames = keyof RuntimeImplementations<typeof turnMachine, 'actions', TurnOwnActions>;
    type MasterNames = keyof RuntimeImplementations<typeof masterMachine, 'actions', MasterOwnActions>;
    expectTypeOf<TurnNames>().toEqualTypeOf<
      | 'announceTurnStart'
      | 'startCalls'
      | 'commitTurnInput'
      | 'publishAssistantMessage'
      | 'commitTurn'
      | 'announceTurnEnd'
      | 'announceApprovalRequest'
      | 'announceApprovalResolved'
      | 'withdrawApprovals'
      | 'countRejectedCall'
    >();
    expect(turnActions.sort()).toEqual(
      [
        'announceTurnStart',
        'startCalls',
        'commitTurnInput',
        'publishAssistantMessage',
        'commitTurn',
        'announceTurnEnd',
        'announceApprovalRequest',
        'announceApprovalResolved',
        'withdrawApprovals',
        'countRejectedCall',
      ].sort(),
    );
    expect(masterActions.length).toBe(10);
    expectTypeOf<MasterNames>().toEqualTypeOf<
      | 'announceAgentStart'
      | 'announceAgentEnd'
      | 'announceRetry'
      | 'announceModelFallback'
      | 'closeTurnAfterInternalError'
      | 'acknowledgeQueued'
      | 'countFailedReportTurn'
      | 'discardFailedReportTurn'
      | 'queueReportGuidance'
      | 'planRetry'
    >();
  });

  it('cannot name an action the machine does not have as its own', () => {
    // @ts-expect-error 'endTurnAz' is no action of the turn machine
    expectTypeOf<RuntimeImplementations<typeof turnMachine, 'actions', 'endTurnAz'>>().not.toBeNever();
    // @ts-expect-error a forgotten effect: the implementations lack 'commitTurn' (and the others)
    const partial: RuntimeImplementations<typeof turnMachine, 'actions', TurnOwnActions> = { startCalls: () => {} };
    expect(partial).toBeDefined();
  });
});
