import { assign, type AnyActorRef } from 'xstate';
import { masterMachine } from '../../machines/master.machine.js';
import type {
  MasterConfig as MasterSessionConfig,
  MasterContext,
  MasterInput,
  RunStopError,
} from '../../machines/master.types.js';
import type { TurnContext } from '../../machines/turn.machine.js';
import type { TurnInput } from '../../machines/turn.types.js';
import type { Message } from '../../src/domain/messages.js';
import {
  activeDelays,
  activeInvocations,
  doneEvent,
  recorder,
  type Environment,
  type Move,
  type Walk,
} from './harness/explore.js';
import { reachableTurnOutcomes, type TurnOutcome } from './turn-outcomes.js';
import { POLICY_NOTE, PROMPT } from './turn-fixtures.js';
import { NO_FEATURES, type TurnConfig } from './turn-model.js';

/**
 * The master machine's world. The turn it invokes is not a stub: for each turn input the master
 * computes, the outcomes offered are exactly the outputs the real turn machine reaches under its
 * own environment (turn-outcomes.ts), split by what the master told it (nothing, steering, abort).
 *
 * Alphabet (a move is offered only in a state where it can arrive):
 * - `START` in idle (resuming a crashed run with `RESUME` is not modelled yet)
 * - `STEER` `{ message: 'steer N' }` · `FOLLOW_UP` `{ message: 'follow-up N' }` · `ABORT` (once) ·
 *   `STOP` `{ error: STOP_ERROR }` (once: the runtime's store failed) — in a running session, as many as the
 *   configuration allows per path
 * - `turn:<outcome>`                  done(turn): every reachable turn outcome for that input
 *   (only aborted ones once ABORT was forwarded to the turn; steered ones only after steering was)
 * - `overflow:recovered | failed`     done(recoverFromOverflow)
 * - `postLoop:continue | stop | inject`   done(runPostLoopPolicies)
 * - `after(retryDelay)`               the backoff timer
 */

export interface MasterConfig {
  name: string;
  input: MasterInput;
  /** The turn's environment the outcomes come from (its features are `input.turnFeatures`). */
  turn: TurnConfig;
  maxSteers: number;
  maxFollowUps: number;
}

export interface MasterEnv {
  steers: number;
  followUps: number;
  aborts: number;
  stops: number;
  /** `modelCalls` when the current turn was invoked (-1 for the closing attempt): a new value means a new turn invocation. */
  turnCall: number;
  abortForwarded: boolean;
  steeringForwarded: boolean;
}

/** A chat session started with the prompt: 2 turns × 2 attempts, one model, no policies. */
export const BASE_CONFIG: MasterSessionConfig = {
  steeringMode: 'oneAtATime',
  followUpMode: 'oneAtATime',
  maxTurns: 2,
  maxAttempts: 2,
  modelCount: 1,
  reportToolName: null,
  progressToolNames: [],
  postLoopPolicies: false,
  turnFeatures: NO_FEATURES,
};

/** A session's input with its configuration changed. */
export const session = (changes: Partial<MasterSessionConfig> = {}): MasterInput => ({
  config: { ...BASE_CONFIG, ...changes },
  newMessages: [PROMPT],
  steeringQueue: [],
  followUpQueue: [],
  turnIndex: 0,
  resume: null,
});

export const BASE_SESSION: MasterInput = session();

/** What the runtime's STOP carries: its store could not write a step. */
export const STOP_ERROR: RunStopError = { code: 'storeFailed', message: 'the store failed to write a step' };

export const REPORT_GUIDANCE: Message = { role: 'user', content: 'call a tool or the final report tool' };

/** Stand-ins for the runtime's effects: recorders for the ones the checks count, and the two context updates it provides. */
export function provideMaster() {
  return masterMachine.provide({
    actions: {
      announceAgentStart: recorder<MasterContext>('announceAgentStart'),
      announceAgentEnd: recorder<MasterContext>('announceAgentEnd'),
      announceRetry: recorder<MasterContext>('announceRetry'),
      announceModelFallback: recorder<MasterContext>('announceModelFallback'),
      countFailedReportTurn: recorder<MasterContext>('countFailedReportTurn'),
      acknowledgeQueued: recorder<MasterContext>('acknowledgeQueued'),
      discardFailedReportTurn: recorder<MasterContext>('discardFailedReportTurn'),
      forwardAbortToTurn: recorder<MasterContext>('forwardAbortToTurn'),
      forwardSteeringToTurn: recorder<MasterContext>('forwardSteeringToTurn'),
      forwardDecisionToTurn: recorder<MasterContext>('forwardDecisionToTurn'),
      queueReportGuidance: assign(({ context }) => ({ pending: [...context.pending, REPORT_GUIDANCE] })),
      planRetry: assign({ retryDelayMs: 1_000 }),
    },
  });
}

export type MasterLogic = ReturnType<typeof provideMaster>;
export type MasterWalk = Walk<MasterLogic, MasterEnv>;

/** The turn actor the master runs (a turn, or the closing of one). */
export function currentTurnActor(walk: MasterWalk): AnyActorRef | null {
  const children = walk.snapshot.children as Record<string, AnyActorRef | undefined>;
  if (walk.snapshot.matches({ running: 'turn' })) return children.turn ?? null;
  if (walk.snapshot.matches({ running: 'closingTurn' })) return children.closingTurn ?? null;
  return null;
}

/**
 * Which turn invocation the master is in: the model-call count it was invoked at (each invocation
 * counts one), -1 while closing an open turn, null outside a turn. Comparable across paths
 * (actor references are not: a graph node keeps the first walk that reached it).
 */
export function turnInvocationOf(walk: MasterWalk): number | null {
  if (walk.snapshot.matches({ running: 'turn' })) return walk.snapshot.context.counts.modelCalls;
  if (walk.snapshot.matches({ running: 'closingTurn' })) return -1;
  return null;
}

/** The input the master gave the turn it is running (or closing), read from the invoked turn actor. */
export function currentTurnInput(walk: MasterWalk): TurnInput | null {
  const child = currentTurnActor(walk);
  return child ? (child.getSnapshot().context as TurnContext).input : null;
}

export function masterEnvironment(config: MasterConfig): Environment<MasterLogic, MasterEnv> {
  const outcomesFor = (input: TurnInput) => reachableTurnOutcomes(config.turn, input);
  return {
    initial: {
      steers: 0,
      followUps: 0,
      aborts: 0,
      stops: 0,
      turnCall: 0,
      abortForwarded: false,
      steeringForwarded: false,
    },
    moves: (walk) => {
      const { env } = walk;
      if (walk.snapshot.matches('idle')) return [{ label: 'START', event: { type: 'START' } }];
      const moves: Move[] = [];
      if (env.steers < config.maxSteers)
        moves.push({
          label: 'STEER',
          event: { type: 'STEER', message: { role: 'user', content: `steer ${env.steers + 1}` } },
        });
      if (env.followUps < config.maxFollowUps) {
        moves.push({
          label: 'FOLLOW_UP',
          event: { type: 'FOLLOW_UP', message: { role: 'user', content: `follow-up ${env.followUps + 1}` } },
        });
      }
      if (env.aborts < 1) moves.push({ label: 'ABORT', event: { type: 'ABORT' } });
      if (env.stops < 1) moves.push({ label: 'STOP', event: { type: 'STOP', error: STOP_ERROR } });
      for (const { id, src } of activeInvocations(walk.snapshot)) {
        const done = (label: string, output: unknown) => moves.push({ label, event: doneEvent(id, output) });
        switch (src) {
          case 'turn': {
            const input = currentTurnInput(walk);
            if (!input) throw new Error('model checking: the turn is invoked but its input is unreadable');
            const outcomes = outcomesFor(input);
            const offered: TurnOutcome[] = env.abortForwarded
              ? outcomes.afterAbort
              : [...outcomes.plain, ...(env.steeringForwarded ? outcomes.afterSteering : [])];
            for (const outcome of offered) done(`turn:${outcome.name}`, outcome.output);
            break;
          }
          case 'recoverFromOverflow':
            done('overflow:recovered', { view: [PROMPT] });
            done('overflow:failed', { view: null });
            break;
          case 'runPostLoopPolicies':
            done('postLoop:continue', { stopped: false, injected: [] });
            done('postLoop:stop', { stopped: true, injected: [] });
            done('postLoop:inject', { stopped: false, injected: [POLICY_NOTE] });
            break;
          default:
            throw new Error(`model checking: no environment for the invoked actor "${src}"`);
        }
      }
      moves.push(...activeDelays(walk.snapshot));
      return moves;
    },
    remember: (env, move, effects, next) => {
      const turnCall = next.matches({ running: 'closingTurn' }) ? -1 : next.context.counts.modelCalls;

      const newTurn = turnCall !== env.turnCall;
      const has = (action: string) => effects.some((effect) => effect.action === action);
      return {
        steers: env.steers + (move.event.type === 'STEER' ? 1 : 0),
        followUps: env.followUps + (move.event.type === 'FOLLOW_UP' ? 1 : 0),
        aborts: env.aborts + (move.event.type === 'ABORT' ? 1 : 0),
        stops: env.stops + (move.event.type === 'STOP' ? 1 : 0),
        turnCall,
        abortForwarded: (!newTurn && env.abortForwarded) || has('forwardAbortToTurn'),
        steeringForwarded: (!newTurn && env.steeringForwarded) || has('forwardSteeringToTurn'),
      };
    },
  };
}
