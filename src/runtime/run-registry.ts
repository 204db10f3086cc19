import type { ActorSystem } from 'xstate';
import type { RunSession } from './run-session.js';

type AnyActorSystem = ActorSystem<any>;

/**
 * The machines are provided once per process (providing per agent rebuilds them: ~2 ms and
 * memory per agent). Their effects find their run through the actor system they run in.
 */
const runs = new WeakMap<AnyActorSystem, RunSession>();

export function bindRun(system: AnyActorSystem, run: RunSession): void {
  runs.set(system, run);
}

export function runOf(system: AnyActorSystem): RunSession {
  const run = runs.get(system);
  if (!run) throw new Error('agentchart: an actor ran outside of any agent run');
  return run;
}

/**
 * A machine action the runtime provides. While it runs its actor is in the middle of a step: a
 * step that an event subscriber triggers meanwhile (a steer from a messageEnd subscriber) is not
 * written on its own; the outer step, once complete, is.
 */
export function runAction<TArgs extends { system: AnyActorSystem }, TParams = undefined>(
  effect: (run: RunSession, args: TArgs, params: TParams) => void,
): (args: TArgs, params?: TParams) => void {
  return (args, params) => {
    const run = runOf(args.system);
    run.actionDepth += 1;
    try {
      effect(run, args, params as TParams);
    } finally {
      run.actionDepth -= 1;
    }
  };
}
