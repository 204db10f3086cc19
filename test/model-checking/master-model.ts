import { assign, type AnyActorRef } from 'xstate';
import { masterMachine } from '../../machines/master.machine.js';
import type { MasterContext, MasterInput } from '../../machines/master.types.js';
import type { TurnContext } from '../../machines/turn.machine.js';
import type { TurnInput } from '../../machines/turn.types.js';
import type { Message } from '../../src/domain/messages.js';
import { activeDelays, activeInvocations, doneEvent, recorder, type Environment, type Move, type Walk } from './harness/explore.js';
import { reachableTurnOutcomes, type TurnOutcome } from './turn-outcomes.js';
import { POLICY_NOTE, PROMPT } from './turn-fixtures.js';
import { NO_FEATURES, NOT_RESUMED, type TurnConfig } from './turn-model.js';

/**
 * The master machine's world. The turn it invokes is not a stub: for each turn input the master
 * computes, the outcomes offered are exactly the outputs the real turn machine reaches under its
 * own environment (turn-outcomes.ts), split by what the master told it (nothing, steering, abort).
 *
 * Alphabet (a move is offered only in a state where it can arrive):
 * - `START` in idle (resuming a crashed run with `RESUME` is not modelled yet)
 * - `STEER` `{ message: 'steer N' }` · `FOLLOW_UP` `{ message: 'follow-up N' }` · `ABORT` (once) —
 *   in a running session, as many as the configuration allows per path
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
  /** `modelCalls` when the current turn was invoked: a new value means a new turn invocation. */
  turnCall: number;
  abortForwarded: boolean;
  steeringForwarded: boolean;
}

/** A chat session started with the prompt: 2 turns × 2 attempts, one model, no policies. */
export const BASE_SESSION: MasterInput = {
  newMessages: [PROMPT],
  steeringQueue: [],
  followUpQueue: [],
  steeringMode: 'oneAtATime',
  followUpMode: 'oneAtATime',
  turnIndex: 0,
  maxTurns: 2,
  maxAttempts: 2,
  modelCount: 1,
  reportToolName: null,
  progressToolNames: [],
  postLoopPolicies: false,
  turnFeatures: NO_FEATURES,
  ...NOT_RESUMED,
};

export const REPORT_GUIDANCE: Message = { role: 'user', content: 'call a tool or the final report tool' };

/** Stand-ins for the runtime's effects: recorders for the ones the checks count, and the two context updates it provides. */
export function provideMaster() {
  return masterMachine.provide({
    actions: {
      announceAgentStart: recorder<MasterContext>('announceAgentStart'),
      announceAgentEnd: recorder<MasterContext>('announceAgentEnd'),
      announceRetry: recorder<MasterContext>('announceRetry'),
      announceModelFallback: recorder<MasterContext>('announceModelFallback'),
      closeOpenTurnAsAborted: recorder<MasterContext>('closeOpenTurnAsAborted'),
      countFailedReportTurn: recorder<MasterContext>('countFailedReportTurn'),
      acknowledgeQueued: recorder<MasterContext>('acknowledgeQueued'),
      discardFailedReportTurn: recorder<MasterContext>('discardFailedReportTurn'),
      forwardAbortToTurn: recorder<MasterContext>('forwardAbortToTurn'),
      forwardSteeringToTurn: recorder<MasterContext>('forwardSteeringToTurn'),
      queueReportGuidance: assign(({ context }) => ({ pending: [...context.pending, REPORT_GUIDANCE] })),
      planRetry: assign({ retryDelayMs: 1_000 }),
    },
  });
}

export type MasterLogic = ReturnType<typeof provideMaster>;
export type MasterWalk = Walk<MasterLogic, MasterEnv>;

/** The input the master gave the turn it is running, read from the invoked turn actor. */
export function currentTurnInput(walk: MasterWalk): TurnInput | null {
  const child = (walk.snapshot.children as Record<string, AnyActorRef | undefined>).turn;
  if (!child || !walk.snapshot.matches({ running: 'turn' })) return null;
  // The turn's context starts as a copy of its input (plus working fields the turn ignores as input).
  const context: TurnInput = child.getSnapshot().context as TurnContext;
  return context;
}

export function masterEnvironment(config: MasterConfig): Environment<MasterLogic, MasterEnv> {
  const outcomesFor = (input: TurnInput) => reachableTurnOutcomes(config.turn, input);
  return {
    initial: { steers: 0, followUps: 0, aborts: 0, turnCall: 0, abortForwarded: false, steeringForwarded: false },
    moves: (walk) => {
      const { env } = walk;
      if (walk.snapshot.matches('idle')) return [{ label: 'START', event: { type: 'START' } }];
      const moves: Move[] = [];
      if (env.steers < config.maxSteers) moves.push({ label: 'STEER', event: { type: 'STEER', message: { role: 'user', content: `steer ${env.steers + 1}` } } });
      if (env.followUps < config.maxFollowUps) {
        moves.push({ label: 'FOLLOW_UP', event: { type: 'FOLLOW_UP', message: { role: 'user', content: `follow-up ${env.followUps + 1}` } } });
      }
      if (env.aborts < 1) moves.push({ label: 'ABORT', event: { type: 'ABORT' } });
      for (const { id, src } of activeInvocations(walk.snapshot)) {
        const done = (label: string, output: unknown) => moves.push({ label, event: doneEvent(id, output) });
        switch (src) {
          case 'turn': {
            const input = currentTurnInput(walk);
            if (!input) throw new Error('model checking: the turn is invoked but its input is unreadable');
            const outcomes = outcomesFor(input);
            const offered: TurnOutcome[] = env.abortForwarded ? outcomes.afterAbort : [...outcomes.plain, ...(env.steeringForwarded ? outcomes.afterSteering : [])];
            for (const outcome of offered) done(`turn:${outcome.name}`, outcome.output);
            break;
          }
          case 'recoverFromOverflow':
            done('overflow:recovered', { recovered: true });
            done('overflow:failed', { recovered: false });
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
      const newTurn = next.context.modelCalls !== env.turnCall;
      const has = (action: string) => effects.some((effect) => effect.action === action);
      return {
        steers: env.steers + (move.event.type === 'STEER' ? 1 : 0),
        followUps: env.followUps + (move.event.type === 'FOLLOW_UP' ? 1 : 0),
        aborts: env.aborts + (move.event.type === 'ABORT' ? 1 : 0),
        turnCall: next.context.modelCalls,
        abortForwarded: (!newTurn && env.abortForwarded) || has('forwardAbortToTurn'),
        steeringForwarded: (!newTurn && env.steeringForwarded) || has('forwardSteeringToTurn'),
      };
    },
  };
}
