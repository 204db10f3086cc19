import type { AnyActorRef } from 'xstate';
import type { MasterContext } from '../../machines/master.types.js';
import type { ToolCallContext } from '../../machines/tool-call.machine.js';
import type { TurnContext } from '../../machines/turn.context.js';
import type { StepMachines } from '../store/step-types.js';
import type { StateValue } from '../trace/format.js';
import { callActorsOf, turnActorOf } from './checkpoint.js';
import type { RunSession } from './run-session.js';

type Status = StepMachines['calls'][number]['status'];
interface Snapshot<TContext> {
  status: Status;
  value: StateValue;
  context: TContext;
  children: Record<string, AnyActorRef | undefined>;
}

/** The charts' active states now (kept with each step): the run's master, its turn and the turn's tool calls. */
export function machinesOf(run: RunSession | null): StepMachines {
  const master = run && !run.ended ? (run.master?.getSnapshot() as Snapshot<MasterContext> | undefined) : undefined;
  if (!run || !master) return { master: null, turn: null, calls: [] };
  const actor = turnActorOf(master as never);
  const turn = actor ? (actor.getSnapshot() as Snapshot<TurnContext>) : null;
  return {
    master: master.value,
    turn: turn ? { turnIndex: turn.context.input.turnIndex, value: turn.value, status: turn.status } : null,
    calls: callActorsOf(run, actor).map((call) => {
      const snapshot = call.getSnapshot() as Snapshot<ToolCallContext>;
      const { id, name } = snapshot.context.call;
      return { id, name, value: snapshot.value, status: snapshot.status };
    }),
  };
}
