import { assign } from 'xstate';
import { resultsInCallOrder } from '../../machines/tool-results.js';
import { turnMachine, type TurnContext } from '../../machines/turn.machine.js';
import type { ApprovalOutput, PreDispatchOutput, PreparedCall, ResponseOutput, ResultsByPosition, TurnFeatures, TurnInput } from '../../machines/turn.types.js';
import { toolCallsOf, type AssistantMessage, type ToolCallBlock, type ToolResultMessage } from '../../src/domain/messages.js';
import { activeDelays, activeInvocations, doneEvent, recorder, type Environment, type Move, type Walk } from './harness/explore.js';
import { KNOWN_TOOLS, POLICY_NOTE, PROMPT, REPLIES, type ReplyName } from './turn-fixtures.js';

/**
 * The turn machine's world: what the runtime decides outside the machine (preprocessing against
 * the tool registry, the dispatch partition) and the event alphabet, with payloads. The session's
 * features (policies, steering) reach the machine through its input, as in production.
 *
 * Alphabet (a move is offered only in a state where it can arrive):
 * - `ABORT` (at most twice per path: a repeated abort must be harmless) · `STEERING_ARRIVED` (once)
 * - `preTurn:continue | stop | inject`                done(runPreTurnPolicies)
 * - `reply:<name>` for each reply of the configuration  done(callModel) — see turn-fixtures.ts;
 *   `reply:notCalled` only after ABORT
 * - `preDispatch:continue | skipFirst | stop | inject` done(runPreDispatchPolicies), built from the prepared calls
 * - `approval:yes | no | threw | rewrite`             done(requestApprovals): all approved; the first
 *   awaiting call rejected; the handler threw (the runtime isolates it into a rejection
 *   "approval failed"); approveWith(new arguments), which re-enters pre-dispatch
 * - `tools:ok | firstFails`                           BATCH_SETTLED with a result for every prepared call;
 *   `tools:cancelled` only after the turn sent CANCEL (steering: interrupted; abort: not);
 *   `tools:held` only after the turn sent HOLD (steering: the started call finished, the rest skipped)
 * - `after(steeringGrace)`                            the grace timer
 * - `postTurn:continue | stop | inject | replace`     done(runPostTurnPolicies); replace keeps the tool-call blocks
 */

export interface TurnConfig {
  name: string;
  /** Approval mode 'smart': tools marked `requiresApproval` (write) ask; otherwise nothing asks. */
  approvals: boolean;
  partition: 'valid' | 'invalid';
  replies: readonly ReplyName[];
}

export const ALL_FEATURES: TurnFeatures = {
  preTurnPolicies: true,
  preDispatchPolicies: true,
  postTurnPolicies: true,
  steeringInterrupts: true,
  steeringGraceMs: 250,
  // The dispatch states (and an invalid custom partition) stay on every explored path.
  fixedPartition: false,
};
export const NO_FEATURES: TurnFeatures = { ...ALL_FEATURES, preTurnPolicies: false, preDispatchPolicies: false, postTurnPolicies: false };

export interface TurnEnv {
  aborts: number;
  steerings: number;
  /** What the turn asked the tool batch to do (CANCEL), if anything. */
  cancel: 'steering' | 'aborted' | null;
  /** The turn told the batch to start no further call (HOLD, on steering). */
  held: boolean;
}

const callIds = (message: AssistantMessage | null | undefined) => (message ? toolCallsOf(message).map((block) => block.id) : []);
const orderedResultIds = (context: TurnContext) => resultsInCallOrder(context.reply?.message ?? null, context.results).map((result) => result.toolCallId);

/** Stand-ins for what `src/runtime` provides: preprocessing, the partition, and recording effects. */
export function provideTurn(config: TurnConfig) {
  return turnMachine.provide({
    actions: {
      announceTurnStart: recorder<TurnContext>('announceTurnStart'),
      commitTurnInput: recorder<TurnContext>('commitTurnInput', (context) => [...context.newMessages, ...context.injected].length),
      publishAssistantMessage: recorder<TurnContext>('publishAssistantMessage'),
      commitTurn: recorder<TurnContext>('commitTurn', (context) => ({
        calls: callIds(context.reply?.message),
        results: orderedResultIds(context),
        resultCount: context.results.size,
      })),
      announceTurnEnd: recorder<TurnContext>('announceTurnEnd', (context) => ({ reason: context.endReason, results: orderedResultIds(context) })),
      denyPendingApproval: recorder<TurnContext>('denyPendingApproval'),
      cancelToolBatch: recorder<TurnContext, { reason: 'aborted' | 'steering' }>('cancelToolBatch', (_, params) => params.reason),
      holdToolBatch: recorder<TurnContext>('holdToolBatch'),
      prepareToolCalls: assign(({ context }) => prepare(context, config)),
      planDispatch: assign(({ context }) =>
        config.partition === 'valid'
          ? { groups: [context.prepared.map((_, index) => index)], invalidPartition: null }
          : { groups: null, invalidPartition: `index ${context.prepared.length} is out of range` },
      ),
    },
  });
}

export type TurnLogic = ReturnType<typeof provideTurn>;
export type TurnWalk = Walk<TurnLogic, TurnEnv>;

const errorResult = (call: ToolCallBlock, content: string): ToolResultMessage => ({ role: 'toolResult', toolCallId: call.id, toolName: call.name, content, isError: true });
const toolResult = (call: ToolCallBlock, content: string, isError: boolean): ToolResultMessage => ({ role: 'toolResult', toolCallId: call.id, toolName: call.name, content, isError });

/** Preprocessing as the runtime does it: unknown tools and invalid arguments get an error result and never start. */
function prepare(context: TurnContext, config: TurnConfig): { prepared: PreparedCall[]; results: ResultsByPosition } {
  const reply = context.reply;
  if (!reply) return { prepared: [], results: context.results };
  const invalid = new Set(reply.invalidCalls.map((entry) => entry.id));
  const results = new Map(context.results);
  const prepared: PreparedCall[] = [];
  toolCallsOf(reply.message).forEach((call, position) => {
    const tool = KNOWN_TOOLS[call.name];
    if (!tool) results.set(position, errorResult(call, `Unknown tool "${call.name}".`));
    else if (invalid.has(call.id)) results.set(position, errorResult(call, 'invalid arguments'));
    else prepared.push({ position, call, approved: !(config.approvals && tool.requiresApproval), cleared: false });
  });
  return { prepared, results };
}

export function turnEnvironment(config: TurnConfig): Environment<TurnLogic, TurnEnv> {
  return {
    initial: { aborts: 0, steerings: 0, cancel: null, held: false },
    moves: (walk) => {
      const { context } = walk.snapshot;
      const moves: Move[] = [];
      if (walk.env.aborts < 2) moves.push({ label: 'ABORT', event: { type: 'ABORT' } });
      if (walk.env.steerings < 1) moves.push({ label: 'STEERING_ARRIVED', event: { type: 'STEERING_ARRIVED' } });
      for (const { id, src } of activeInvocations(walk.snapshot)) {
        const done = (label: string, output: unknown) => moves.push({ label, event: doneEvent(id, output) });
        switch (src) {
          case 'runPreTurnPolicies':
            done('preTurn:continue', { stopped: false, injected: [] });
            done('preTurn:stop', { stopped: true, injected: [] });
            done('preTurn:inject', { stopped: false, injected: [POLICY_NOTE] });
            break;
          case 'callModel':
            for (const name of config.replies) done(`reply:${name}`, REPLIES[name]);
            if (walk.env.aborts > 0) done('reply:notCalled', REPLIES.notCalled);
            break;
          case 'runPreDispatchPolicies':
            for (const [label, output] of preDispatchOutputs(context)) done(label, output);
            break;
          case 'requestApprovals':
            for (const [label, output] of approvalOutputs(context)) done(label, output);
            break;
          case 'executeToolCalls':
            for (const [label, event] of batchSettlements(context, walk.env.cancel, walk.env.held)) moves.push({ label, event });
            break;
          case 'runPostTurnPolicies':
            for (const [label, output] of postTurnOutputs(context)) done(label, output);
            break;
          default:
            throw new Error(`model checking: no environment for the invoked actor "${src}"`);
        }
      }
      moves.push(...activeDelays(walk.snapshot));
      return moves;
    },
    remember: (env, move, effects) => {
      const cancel = effects.find((effect) => effect.action === 'cancelToolBatch');
      return {
        aborts: env.aborts + (move.event.type === 'ABORT' ? 1 : 0),
        steerings: env.steerings + (move.event.type === 'STEERING_ARRIVED' ? 1 : 0),
        cancel: cancel ? (cancel.detail as 'steering' | 'aborted') : env.cancel,
        held: env.held || effects.some((effect) => effect.action === 'holdToolBatch'),
      };
    },
  };
}

function preDispatchOutputs(context: TurnContext): Array<[string, PreDispatchOutput]> {
  const cleared = context.prepared.map((entry) => ({ ...entry, cleared: true }));
  const base = { prepared: cleared, results: context.results, stopped: false, injected: [] };
  const outputs: Array<[string, PreDispatchOutput]> = [
    ['preDispatch:continue', base],
    ['preDispatch:stop', { prepared: [], results: context.results, stopped: true, stopReason: 'a policy stopped the batch', injected: [] }],
    ['preDispatch:inject', { ...base, injected: [POLICY_NOTE] }],
  ];
  const first = context.prepared.find((entry) => !entry.cleared);
  if (first) {
    const results = new Map(context.results).set(first.position, errorResult(first.call, 'skipped: not allowed here'));
    outputs.push(['preDispatch:skipFirst', { ...base, prepared: cleared.filter((entry) => entry.position !== first.position), results }]);
  }
  return outputs;
}

function approvalOutputs(context: TurnContext): Array<[string, ApprovalOutput]> {
  const approved = context.prepared.map((entry) => ({ ...entry, approved: true }));
  const outputs: Array<[string, ApprovalOutput]> = [['approval:yes', { prepared: approved, results: context.results, rewritten: false }]];
  const first = context.prepared.find((entry) => !entry.approved);
  if (!first) return outputs;
  const without = approved.filter((entry) => entry.position !== first.position);
  const deny = (content: string) => ({ prepared: without, results: new Map(context.results).set(first.position, errorResult(first.call, content)), rewritten: false });
  outputs.push(['approval:no', deny('rejected: the user declined this tool call')]);
  outputs.push(['approval:threw', deny('approval failed: handler crashed')]);
  const rewritten = approved.map((entry) =>
    entry.position === first.position ? { ...entry, call: { ...entry.call, arguments: { path: 'c.txt' } }, cleared: false } : entry,
  );
  outputs.push(['approval:rewrite', { prepared: rewritten, results: context.results, rewritten: true }]);
  return outputs;
}

/** What the batch actor sends back: it always settles every prepared call (cancelled ones included). */
function batchSettlements(context: TurnContext, cancel: TurnEnv['cancel'], held: boolean): Array<[string, Move['event']]> {
  const ids = context.prepared.map((entry) => entry.call.id);
  const settle = (resultOf: (entry: PreparedCall, index: number) => ToolResultMessage, interrupted: boolean, startedCallIds: string[]) => {
    const results = new Map(context.results);
    context.prepared.forEach((entry, index) => results.set(entry.position, resultOf(entry, index)));
    return { type: 'BATCH_SETTLED', results, interrupted, startedCallIds };
  };
  const settlements: Array<[string, Move['event']]> = [
    ['tools:ok', settle((entry) => toolResult(entry.call, 'ok', false), false, ids)],
    ['tools:firstFails', settle((entry, index) => toolResult(entry.call, index === 0 ? 'tool failed' : 'ok', index === 0), false, ids)],
  ];
  if (cancel) {
    // Sequential: the first call had finished when the cancellation came; the others never started.
    const text = cancel === 'steering' ? 'cancelled: steering' : 'aborted: the run was cancelled';
    const first = context.prepared.length > 1;
    const cancelled = settle((entry, index) => (index === 0 && first ? toolResult(entry.call, 'ok', false) : toolResult(entry.call, text, true)), cancel === 'steering', first ? ids.slice(0, 1) : []);
    settlements.push(['tools:cancelled', cancelled]);
  }
  if (held && !cancel) {
    // Held by steering: the first call had started and finished; the others never started.
    const skipped = 'skipped: steering';
    settlements.push(['tools:held', settle((entry, index) => (index === 0 ? toolResult(entry.call, 'ok', false) : toolResult(entry.call, skipped, true)), true, ids.slice(0, 1))]);
  }
  return settlements;
}

function postTurnOutputs(context: TurnContext): Array<[string, ResponseOutput]> {
  const message = context.reply?.message;
  const outputs: Array<[string, ResponseOutput]> = [
    ['postTurn:continue', { stopped: false, injected: [], assistant: null }],
    ['postTurn:stop', { stopped: true, injected: [], assistant: null }],
    ['postTurn:inject', { stopped: false, injected: [POLICY_NOTE], assistant: null }],
  ];
  if (message) {
    const replaced = { ...message, content: message.content.map((block) => (block.type === 'text' ? { ...block, text: 'Redacted.' } : block)) };
    outputs.push(['postTurn:replace', { stopped: false, injected: [], assistant: replaced }]);
  }
  return outputs;
}

/** The attempts the master gives a turn, by name. */
export const TURN_ATTEMPTS = {
  freshWithRecovery: { attempt: 'fresh', retryAvailable: true, fallbackAvailable: true, overflowRecoveryAvailable: true },
  freshLastChance: { attempt: 'fresh', retryAvailable: false, fallbackAvailable: false, overflowRecoveryAvailable: false },
  retryLastChance: { attempt: 'retry', retryAvailable: false, fallbackAvailable: false, overflowRecoveryAvailable: false },
  overflowRetry: { attempt: 'overflowRetry', retryAvailable: true, fallbackAvailable: false, overflowRecoveryAvailable: false },
  /** Re-run after a backoff during which steering was accepted: it takes effect in this attempt. */
  retryAfterSteering: { attempt: 'retry', retryAvailable: false, fallbackAvailable: false, overflowRecoveryAvailable: false, steeringArrived: true },
} satisfies Record<string, Pick<TurnInput, 'attempt' | 'retryAvailable' | 'fallbackAvailable' | 'overflowRecoveryAvailable'> & Partial<Pick<TurnInput, 'steeringArrived'>>>;

export type AttemptName = keyof typeof TURN_ATTEMPTS;

/** Not a run resumed after a crash (resuming is not modelled yet). */
export const NOT_RESUMED = { resume: null, steeringArrived: false };

/** The first turn of a session started with the prompt. */
export const turnInput = (features: TurnFeatures, attempt: AttemptName): TurnInput => ({ turnIndex: 0, features, newMessages: [PROMPT], ...NOT_RESUMED, ...TURN_ATTEMPTS[attempt] });
