import type { ActorSystem } from 'xstate';

type AnyActorSystem = ActorSystem<any>;
import type { RunSession } from './run-session.js';

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
