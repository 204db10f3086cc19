import type { ToolCallOutput } from '../../machines/tool-call.machine.js';
import { resultsInCallOrder } from '../../machines/tool-results.js';
import { callActorId, dispatchedIndices } from '../../machines/turn.batch.js';
import { awaitingApproval, requestsOut } from '../../machines/turn.approvals.js';
import type { TurnContext } from '../../machines/turn.context.js';
import { turnMachine } from '../../machines/turn.machine.js';
import type {
  ApprovalVerdict,
  ModelReply,
  PartitionOutput,
  PreDispatchOutput,
  PreparedCall,
  PreprocessOutput,
  ResponseOutput,
  TurnFeatures,
  TurnInput,
} from '../../machines/turn.types.js';
import {
  toolCallsOf,
  type AssistantMessage,
  type ToolCallBlock,
  type ToolResultMessage,
} from '../../src/domain/messages.js';
import {
  activeDelays,
  activeInvocations,
  doneEvent,
  recorder,
  type Environment,
  type Move,
  type Walk,
} from './harness/explore.js';
import { KNOWN_TOOLS, POLICY_NOTE, PROMPT, REPLIES, type ReplyName } from './turn-fixtures.js';

/**
 * The turn machine's world: what the runtime decides outside the machine (preprocessing against
 * the tool registry, the custom partition) and the event alphabet, with payloads. The session's
 * features (policies, steering) reach the machine through its input, as in production.
 *
 * Alphabet (a move is offered only in a state where it can arrive):
 * - `ABORT` (at most twice per path: a repeated abort must be harmless) · `STEERING_ARRIVED` (once)
 * - `preTurn:continue | stop | inject`                done(runPreTurnPolicies)
 * - `reply:<name>` for each reply of the configuration  done(callModel) — see turn-fixtures.ts; a
 *   reply with tool calls comes prepared, as the model-call effect prepares it; `reply:notCalled`
 *   only after ABORT; the closing attempt gets `reply:closing`
 * - `preDispatch:continue | skipFirst | stop | inject` done(runPreDispatchPolicies), built from the prepared calls
 * - `approval:requested:<id>`                         APPROVAL_REQUESTED, one per call in call order (the step that
 *   chose the calls is over)
 * - `decided:<id>:yes | no | rewrite`                 APPROVAL_DECIDED (resolveApproval) for any call that waits;
 *   `decided:<id>:early` before the requests are published (an answer that reaches a resumed turn first)
 * - `approval:<id>:yes | no | threw | rewrite`        APPROVAL_VERDICT on any call that waits: approved; the user
 *   declined; the handler threw (the runtime isolates it into a `failed` verdict); approveWith(new arguments),
 *   which re-enters pre-dispatch. Every call awaiting approval waits at once: each order of decisions is a path.
 * - `partition:valid | invalid`                       done(partitionCalls)
 * - `call:<n>:ok | fails`                             done(call.<n>): a running tool-call actor ended (started)
 *   `call:<n>:skipped` only after the turn held the batch (steering: a call that had not started),
 *   `call:<n>:cancelled` only after it cancelled it (the text the turn sent)
 * - `after(steeringGrace)`                            the grace timer
 * - `postTurn:continue | stop | inject | replace`     done(runPostTurnPolicies); replace keeps the tool-call blocks
 */

export interface TurnConfig {
  name: string;
  /** Approval mode 'smart': tools marked `requiresApproval` (write) ask; otherwise nothing asks. */
  approvals: boolean;
  partition: 'valid' | 'invalid';
  replies: readonly ReplyName[];
  /**
   * Which answers an approval may get: every kind from both the handler and resolveApproval (the default), or
   * (a batch of several approvals, where the orders are what is explored) approve or deny from one of them.
   */
  answers?: 'every' | 'handlerYesNo' | 'resolveYesNo';
}

export const ALL_FEATURES: TurnFeatures = {
  preTurnPolicies: true,
  preDispatchPolicies: true,
  postTurnPolicies: true,
  steeringInterrupts: true,
  steeringGraceMs: 250,
  // The dispatch states (and an invalid custom partition) stay on every explored path.
  execution: { kind: 'custom' },
};
export const NO_FEATURES: TurnFeatures = {
  ...ALL_FEATURES,
  preTurnPolicies: false,
  preDispatchPolicies: false,
  postTurnPolicies: false,
};

export interface TurnEnv {
  aborts: number;
  steerings: number;
  /** What the turn told its running calls: cancel (with the result text), hold (steering). */
  cancel: string | null;
  held: boolean;
}

const callIds = (message: AssistantMessage | null | undefined) =>
  message ? toolCallsOf(message).map((block) => block.id) : [];
const orderedResultIds = (context: TurnContext) =>
  resultsInCallOrder(context.reply?.message ?? null, context.settled).map((result) => result.toolCallId);

/** Stand-ins for what `src/runtime` provides: recording effects (the preparation comes with the replies). */
export function provideTurn() {
  return turnMachine.provide({
    actions: {
      announceTurnStart: recorder<TurnContext>('announceTurnStart'),
      commitTurnInput: recorder<TurnContext>(
        'commitTurnInput',
        (context) => [...context.input.newMessages, ...context.inputInjected].length,
      ),
      publishAssistantMessage: recorder<TurnContext>('publishAssistantMessage'),
      commitTurn: recorder<TurnContext>('commitTurn', (context) => ({
        calls: callIds(context.reply?.message),
        results: orderedResultIds(context),
      })),
      announceTurnEnd: recorder<TurnContext>('announceTurnEnd', (context) => ({
        reason: context.ending?.turnEndReason ?? null,
        results: orderedResultIds(context),
      })),
      announceApprovalRequest: recorder<TurnContext>('announceApprovalRequest', (context, _params, event) =>
        event.type === 'APPROVAL_REQUESTED' && !context.asked.includes(event.toolCallId) ? [event.toolCallId] : [],
      ),
      announceApprovalResolved: recorder<TurnContext, { toolCallId: string; approved: boolean }>(
        'announceApprovalResolved',
        (_, params) => ({ call: params.toolCallId, approved: params.approved }),
      ),
      withdrawApprovals: recorder<TurnContext>('withdrawApprovals', (context) =>
        requestsOut(context).map((entry) => entry.call.id),
      ),
      countRejectedCall: recorder<TurnContext>('countRejectedCall'),
      cancelRunningCalls: recorder<TurnContext, { result: string }>('cancelRunningCalls', (_, params) => params.result),
      holdStartingCalls: recorder<TurnContext>('holdStartingCalls'),
      startCalls: recorder<TurnContext>('startCalls', (context) => context.batch?.starting ?? []),
    },
  });
}

export type TurnLogic = ReturnType<typeof provideTurn>;
export type TurnWalk = Walk<TurnLogic, TurnEnv>;

const errorResult = (call: ToolCallBlock, content: string): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId: call.id,
  toolName: call.name,
  content,
  isError: true,
});
const toolResult = (call: ToolCallBlock, content: string, isError: boolean): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId: call.id,
  toolName: call.name,
  content,
  isError,
});

/** Preprocessing as the runtime does it: unknown tools and invalid arguments get an error result and never start. */
export function prepare(
  reply: ModelReply,
  config: TurnConfig,
  decided: ReadonlySet<number> = new Set(),
): PreprocessOutput {
  const invalid = new Set(reply.invalidCalls.map((entry) => entry.id));
  const prepared: PreparedCall[] = [];
  const errors: PreprocessOutput['invalid'] = [];
  toolCallsOf(reply.message).forEach((call, position) => {
    if (decided.has(position)) return; // decided before a restart
    const tool = KNOWN_TOOLS[call.name];
    if (!tool) errors.push({ position, result: errorResult(call, `Unknown tool "${call.name}".`) });
    else if (invalid.has(call.id)) errors.push({ position, result: errorResult(call, 'invalid arguments') });
    else
      prepared.push({
        position,
        call,
        approved: !(config.approvals && tool.requiresApproval),
        cleared: false,
        timeoutMs: null,
      });
  });
  return { prepared, invalid: errors };
}

/** A reply as the model-call effect hands it over: tool calls of a reply that did not fail come prepared. */
function replyFor(name: ReplyName, config: TurnConfig): ModelReply {
  const reply: ModelReply = REPLIES[name];
  return reply.error === null && toolCallsOf(reply.message).length > 0
    ? { ...reply, prepared: prepare(reply, config) }
    : reply;
}

function settledPositions(context: TurnContext): Set<number> {
  const settled = new Set<number>();
  for (let cell = context.settled; cell; cell = cell.rest) settled.add(cell.position);
  return settled;
}

/** The tool-call actors the turn runs now (created, not settled): their positions. */
export function runningPositions(context: TurnContext): number[] {
  const settled = settledPositions(context);
  return dispatchedIndices(context.batch)
    .map((index) => (context.prepared[index] as PreparedCall).position)
    .filter((position) => !settled.has(position));
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
            if (context.input.attempt === 'closing') {
              done('reply:closing', REPLIES.closing);
              break;
            }
            for (const name of config.replies) done(`reply:${name}`, replyFor(name, config));
            if (walk.env.aborts > 0) done('reply:notCalled', REPLIES.notCalled);
            break;
          case 'runPreDispatchPolicies':
            for (const [label, output] of preDispatchOutputs(context)) done(label, output);
            break;
          case 'askApproval':
            moves.push(...approvalMoves(walk, config.answers ?? 'every'));
            break;
          case 'prepareToolCalls':
            // A resumed turn: its published reply's calls, checked against the registry again.
            done('prepare:done', prepare(context.reply as ModelReply, config, settledPositions(context)));
            break;
          case 'partitionCalls':
            for (const [label, output] of partitionOutputs(context, config)) done(label, output);
            break;
          case 'runPostTurnPolicies':
            for (const [label, output] of postTurnOutputs(context)) done(label, output);
            break;
          default:
            throw new Error(`model checking: no environment for the invoked actor "${src}"`);
        }
      }
      moves.push(...callMoves(context, walk.env));
      moves.push(...activeDelays(walk.snapshot));
      return moves;
    },
    remember: (env, move, effects) => {
      const cancel = effects.find((effect) => effect.action === 'cancelRunningCalls');
      return {
        aborts: env.aborts + (move.event.type === 'ABORT' ? 1 : 0),
        steerings: env.steerings + (move.event.type === 'STEERING_ARRIVED' ? 1 : 0),
        cancel: cancel ? (cancel.detail as string) : env.cancel,
        held: env.held || effects.some((effect) => effect.action === 'holdStartingCalls'),
      };
    },
  };
}

/** What each running tool-call actor may end with: its tool ran (ok or failed), or the turn's command settled it. */
function callMoves(context: TurnContext, env: TurnEnv): Move[] {
  const moves: Move[] = [];
  for (const position of runningPositions(context)) {
    const call = (context.prepared.find((entry) => entry.position === position) as PreparedCall).call;
    const end = (label: string, result: ToolResultMessage, started: boolean) =>
      moves.push({
        label: `call:${position}:${label}`,
        event: doneEvent(callActorId({ position }), { position, result, started } satisfies ToolCallOutput),
      });
    if (env.cancel) {
      end('cancelled', toolResult(call, env.cancel, true), true);
      continue;
    }
    end('ok', toolResult(call, 'ok', false), true);
    end('fails', toolResult(call, 'tool failed', true), true);
    if (env.held) end('skipped', errorResult(call, 'skipped: steering'), false);
  }
  return moves;
}

function approvalMoves(walk: TurnWalk, answers: NonNullable<TurnConfig['answers']>): Move[] {
  const waiting = awaitingApproval(walk.snapshot.context).map((entry) => entry.call.id);
  const decided = (id: string, label: string, value: ApprovalVerdict): Move => ({
    label: `decided:${id}:${label}`,
    event: { type: 'APPROVAL_DECIDED', toolCallId: id, verdict: value },
  });
  if (walk.snapshot.matches({ TOOL_EXECUTION: { askingApproval: 'requesting' } })) {
    // The asker sends one request per call, in call order (a subscriber's steer or abort may come between two).
    const next = waiting.find((id) => !walk.snapshot.context.asked.includes(id)) as string;
    const requested: Move = {
      label: `approval:requested:${next}`,
      event: { type: 'APPROVAL_REQUESTED', toolCallId: next },
    };
    // resolveApproval may answer a resumed turn before its requests are published again: the answer is kept.
    const early = answers === 'handlerYesNo' || !waiting[0] ? [] : [decided(waiting[0], 'early', { kind: 'approved' })];
    return [requested, ...early];
  }
  const nameOf = (id: string) => walk.snapshot.context.prepared.find((entry) => entry.call.id === id)?.call.name;
  const verdict = (id: string, label: string, value: ApprovalVerdict): Move => ({
    label: `approval:${id}:${label}`,
    event: { type: 'APPROVAL_VERDICT', toolCallId: id, toolName: nameOf(id), verdict: value },
  });
  const declined = { kind: 'denied', reason: 'the user declined this tool call' } as const;
  return waiting.flatMap((id) => {
    const fromHandler = [verdict(id, 'yes', { kind: 'approved' }), verdict(id, 'no', declined)];
    const fromResolve = [
      decided(id, 'yes', { kind: 'approved' }),
      decided(id, 'no', { kind: 'denied', reason: 'declined by resolveApproval' }),
    ];
    if (answers === 'handlerYesNo') return fromHandler;
    if (answers === 'resolveYesNo') return fromResolve;
    return [
      ...fromHandler,
      verdict(id, 'threw', { kind: 'failed', message: 'handler crashed' }),
      verdict(id, 'rewrite', { kind: 'approvedWith', arguments: { path: 'c.txt' } }),
      ...fromResolve,
      decided(id, 'rewrite', { kind: 'approvedWith', arguments: { path: 'd.txt' } }),
    ];
  });
}

function preDispatchOutputs(context: TurnContext): Array<[string, PreDispatchOutput]> {
  const cleared = context.prepared.map((entry) => ({ ...entry, cleared: true }));
  const base = { kind: 'continue' as const, prepared: cleared, skipped: [], injected: [] };
  const outputs: Array<[string, PreDispatchOutput]> = [
    ['preDispatch:continue', base],
    ['preDispatch:stop', { ...base, kind: 'stop', prepared: [], reason: 'a policy stopped the batch' }],
    ['preDispatch:inject', { ...base, injected: [POLICY_NOTE] }],
  ];
  const first = context.prepared.find((entry) => !entry.cleared);
  if (first) {
    const skipped = [{ position: first.position, result: errorResult(first.call, 'skipped: not allowed here') }];
    outputs.push([
      'preDispatch:skipFirst',
      { ...base, prepared: cleared.filter((entry) => entry.position !== first.position), skipped },
    ]);
  }
  return outputs;
}

function partitionOutputs(context: TurnContext, config: TurnConfig): Array<[string, PartitionOutput]> {
  if (config.partition === 'invalid')
    return [['partition:invalid', { invalid: `index ${context.prepared.length} is out of range` }]];
  // A custom partition: one call per group, so the groups' order and the cancellation between them are explored.
  return [['partition:valid', { groups: context.prepared.map((_, index) => [index]) }]];
}

function postTurnOutputs(context: TurnContext): Array<[string, ResponseOutput]> {
  const message = context.reply?.message;
  const outputs: Array<[string, ResponseOutput]> = [
    ['postTurn:continue', { stopped: false, injected: [], assistant: null }],
    ['postTurn:stop', { stopped: true, injected: [], assistant: null }],
    ['postTurn:inject', { stopped: false, injected: [POLICY_NOTE], assistant: null }],
  ];
  if (message) {
    const replaced = {
      ...message,
      content: message.content.map((block) => (block.type === 'text' ? { ...block, text: 'Redacted.' } : block)),
    };
    outputs.push(['postTurn:replace', { stopped: false, injected: [], assistant: replaced }]);
  }
  return outputs;
}

/** The attempts the master gives a turn, by name. */
export const TURN_ATTEMPTS = {
  freshWithRecovery: {
    attempt: 'fresh',
    retryAvailable: true,
    fallbackAvailable: true,
    overflowRecoveryAvailable: true,
  },
  freshLastChance: {
    attempt: 'fresh',
    retryAvailable: false,
    fallbackAvailable: false,
    overflowRecoveryAvailable: false,
  },
  retryLastChance: {
    attempt: 'retry',
    retryAvailable: false,
    fallbackAvailable: false,
    overflowRecoveryAvailable: false,
  },
  overflowRetry: {
    attempt: 'overflowRetry',
    retryAvailable: true,
    fallbackAvailable: false,
    overflowRecoveryAvailable: false,
  },
  /** Re-run after a backoff during which steering was accepted: it takes effect in this attempt. */
  retryAfterSteering: {
    attempt: 'retry',
    retryAvailable: false,
    fallbackAvailable: false,
    overflowRecoveryAvailable: false,
    steeringArrived: true,
  },
  /** The master closes a turn a deferred failure left open (the run was aborted during a backoff). */
  closing: { attempt: 'closing', retryAvailable: false, fallbackAvailable: false, overflowRecoveryAvailable: false },
} satisfies Record<
  string,
  Pick<TurnInput, 'attempt' | 'retryAvailable' | 'fallbackAvailable' | 'overflowRecoveryAvailable'> &
    Partial<Pick<TurnInput, 'steeringArrived'>>
>;

export type AttemptName = keyof typeof TURN_ATTEMPTS;

/**
 * A turn resumed after a crash with its tool-call reply published: the first call's result was
 * published, the second was running when the process died (a 'safe' tool: re-run, not re-announced).
 */
export function resumedInput(features: TurnFeatures): TurnInput {
  const reply = REPLIES.twoCalls;
  const [first] = toolCallsOf(reply.message);
  const published = new Map([[0, toolResult(first as ToolCallBlock, 'ok', false)]]);
  return {
    ...turnInput(features, 'freshLastChance'),
    attempt: 'resumed',
    newMessages: [],
    resume: {
      reply,
      results: published,
      notRerun: new Map(),
      startedCallIds: ['call_1', 'call_2'],
      approvedCallIds: [],
      approvedArguments: {},
      requestedCallIds: [],
      committed: false,
    },
  };
}

/** Not a run resumed after a crash. */
export const NOT_RESUMED = { resume: null, steeringArrived: false, overflowView: null, modelIndex: 0 };

/** The first turn of a session started with the prompt. */
export const turnInput = (features: TurnFeatures, attempt: AttemptName): TurnInput => ({
  turnIndex: 0,
  features,
  newMessages: [PROMPT],
  ...NOT_RESUMED,
  ...TURN_ATTEMPTS[attempt],
});
