import type { ActorSystem } from 'xstate';
import type { AgentState, RunSession } from './run-session.js';

type AnyActorSystem = ActorSystem<any>;

/**
 * The machines are provided once per process (providing per agent rebuilds them: ~2 ms and
 * memory per agent). Their effects find their run through the actor system they run in.
 */
const runs = new WeakMap<AnyActorSystem, RunSession>();

/**
 * What the machines' effects use of their run, and all they may: the run's events and commits,
 * its signal and end, the handles its effects share (the step boundary, the live stream, the
 * tool-call actors, open questions), and the agent's parts a turn reads (its options, models,
 * tools, history, store). Launching and stopping a run, its lease and its result are not an
 * effect's business (the approval effect asks the run to park; parking.ts decides whether it does).
 */
export interface RunDeps extends Pick<
  RunSession,
  | 'emit'
  | 'commit'
  | 'ledger'
  | 'live'
  | 'streamLiveDelta'
  | 'signal'
  | 'abortReason'
  | 'ended'
  | 'closing'
  | 'finish'
  | 'boundary'
  | 'callActors'
  | 'elicitations'
  | 'openQuestions'
  | 'actionDepth'
  | 'awaitUser'
  | 'reportPolicyError'
  | 'reportTransformRejection'
  | 'countersSnapshot'
  | 'modelAt'
  | 'clock'
  | 'seqNow'
  | 'parkIfWaiting'
> {
  readonly agent: Pick<
    AgentState,
    | 'options'
    | 'resolved'
    | 'sessionKey'
    | 'registry'
    | 'toolSources'
    | 'guard'
    | 'log'
    | 'history'
    | 'sources'
    | 'persister'
    | 'host'
  >;
}

export function bindRun(system: AnyActorSystem, run: RunSession): void {
  runs.set(system, run);
}

/** The one way an effect reaches its run. */
export function runDeps(system: AnyActorSystem): RunDeps {
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
  effect: (run: RunDeps, args: TArgs, params: TParams) => void,
): (args: TArgs, params?: TParams) => void {
  return (args, params) => {
    const run = runDeps(args.system);
    run.actionDepth += 1;
    try {
      effect(run, args, params as TParams);
    } finally {
      run.actionDepth -= 1;
    }
  };
}
