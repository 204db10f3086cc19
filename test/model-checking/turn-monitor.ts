import { awaitingApproval } from '../../machines/turn.approvals.js';
import type { TurnInput, TurnOutput } from '../../machines/turn.types.js';
import { toolCallsOf } from '../../src/domain/messages.js';
import { activeInvocations, type Effect } from './harness/explore.js';
import type { Checks, Monitor } from './harness/paths.js';
import type { TurnEnv, TurnLogic, TurnWalk } from './turn-model.js';

/**
 * Lifecycle invariants of one turn attempt, checked at every step of every path and at its end.
 * Effects are counted from the stand-in actions' recordings.
 */

interface Observed {
  turnStarts: number;
  turnEnds: number;
  inputCommits: number;
  publishes: number;
  commits: number;
  enteredToolExecution: boolean;
  abortSent: boolean;
  /** ABORT, or a model reply that came back marked aborted. */
  abortSeen: boolean;
  /** Steering reached the turn (STEERING_ARRIVED, or the input says it came during a backoff). */
  steeringSeen: boolean;
  /** Calls whose approval request was published, in the order published. */
  requested: readonly string[];
  /** Calls whose request was resolved (toolApprovalResolved), each time it was. */
  resolved: readonly string[];
}

/** Invoked actors that do work for the user; none may start once the turn was asked to abort. */
const WORK = new Set(['callModel', 'runPreDispatchPolicies', 'askApproval', 'runPostTurnPolicies']);
/** What steering (when it interrupts) keeps from starting: the batch and everything before it. */
const BATCH_WORK = new Set(['runPreDispatchPolicies', 'askApproval']);

/** The calls whose request a step published, and those it resolved (decided or withdrawn). */
const requestsIn = (effects: readonly Effect[]) =>
  effects
    .filter((effect) => effect.action === 'announceApprovalRequest')
    .flatMap((effect) => effect.detail as string[]);
const resolutionsIn = (effects: readonly Effect[]) =>
  effects.flatMap((effect) => {
    if (effect.action === 'withdrawApprovals') return effect.detail as string[];
    if (effect.action === 'announceApprovalResolved') return [(effect.detail as { call: string }).call];
    return [];
  });
const callIds = (walk: TurnWalk) =>
  (walk.snapshot.context.reply ? toolCallsOf(walk.snapshot.context.reply.message) : []).map((block) => block.id);

const count = (effects: readonly Effect[], action: string) =>
  effects.filter((effect) => effect.action === action).length;
const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((item, index) => item === b[index]);

export function turnMonitor(input: TurnInput): Monitor<TurnLogic, TurnEnv, Observed> {
  const fresh = input.attempt === 'fresh';
  const closing = input.attempt === 'closing';

  const observe = (observed: Observed, walk: TurnWalk, effects: readonly Effect[], checks: Checks): Observed => {
    const next: Observed = {
      ...observed,
      turnStarts: observed.turnStarts + count(effects, 'announceTurnStart'),
      turnEnds: observed.turnEnds + count(effects, 'announceTurnEnd'),
      inputCommits: observed.inputCommits + count(effects, 'commitTurnInput'),
      publishes: observed.publishes + count(effects, 'publishAssistantMessage'),
      commits: observed.commits + count(effects, 'commitTurn'),
      enteredToolExecution: observed.enteredToolExecution || walk.snapshot.matches('TOOL_EXECUTION'),
      requested: [...observed.requested, ...requestsIn(effects)],
      resolved: [...observed.resolved, ...resolutionsIn(effects)],
    };
    const order = callIds(walk);
    checks.that(
      'approval requests are published in call order',
      sameList(
        next.requested,
        order.filter((id) => next.requested.includes(id)),
      ),
      () => `requested [${next.requested.join(', ')}], calls [${order.join(', ')}]`,
    );
    checks.that(
      'an approval request is resolved at most once',
      new Set(next.resolved).size === next.resolved.length,
      () => `resolved [${next.resolved.join(', ')}]`,
    );
    checks.that('turnStart at most once per turn', next.turnStarts <= 1, () => `${next.turnStarts} turnStarts`);
    checks.that('a re-run attempt never announces turnStart', fresh || next.turnStarts === 0);
    checks.that('turnEnd at most once', next.turnEnds <= 1);
    checks.that('turnEnd follows turnStart', !fresh || next.turnEnds <= next.turnStarts);
    checks.that('the input batch is committed at most once', next.inputCommits <= 1);
    checks.that('one messageStart/messageEnd per attempt', next.publishes <= 1, () => `${next.publishes} publications`);
    checks.that('the turn is committed at most once', next.commits <= 1);
    for (const effect of effects) {
      if (effect.action === 'commitTurn') {
        const parity = effect.detail as { calls: string[]; results: string[] };
        checks.that(
          'parity at commit: one result per tool call, in call order',
          sameList(parity.calls, parity.results),
          () => `calls [${parity.calls.join(', ')}], results [${parity.results.join(', ')}]`,
        );
      }
    }
    return next;
  };

  return {
    start: (walk, effects, checks) =>
      observe(
        {
          turnStarts: 0,
          turnEnds: 0,
          inputCommits: 0,
          publishes: 0,
          commits: 0,
          enteredToolExecution: false,
          abortSent: false,
          abortSeen: false,
          steeringSeen: input.steeringArrived,
          requested: [],
          resolved: [],
        },
        walk,
        effects,
        checks,
      ),

    step: (observed, from, { label, effects }, to, checks) => {
      const before = new Set(activeInvocations(from.snapshot).map((invocation) => invocation.id));
      const invoked = activeInvocations(to.snapshot).filter(
        (invocation) => !before.has(invocation.id) && WORK.has(invocation.src),
      );
      // Tool-call actors created in this step.
      const calls = effects
        .filter((effect) => effect.action === 'startCalls')
        .flatMap((effect) => (effect.detail as number[]).map((index) => `call ${index}`));
      const started = [...invoked.map((invocation) => invocation.src), ...calls];
      const requests = requestsIn(effects).length;
      checks.that(
        'nothing starts after ABORT',
        !observed.abortSent || (started.length === 0 && requests === 0),
        () => `${started.join(', ')} started`,
      );
      const steeringSeen = observed.steeringSeen || label === 'STEERING_ARRIVED';
      const batchWork = [
        ...invoked.filter((invocation) => BATCH_WORK.has(invocation.src)).map((invocation) => invocation.src),
        ...calls,
      ];
      checks.that(
        'steering that interrupts keeps every tool call of the turn from starting (no pre-dispatch, approval request or tool-call actor after it)',
        !(steeringSeen && input.features.steeringInterrupts) || (batchWork.length === 0 && requests === 0),
        () => `${batchWork.join(', ')} started after steering`,
      );
      checks.that(
        'steering while tools run holds the batch (no call starts that had not) before the grace period',
        !(
          label === 'STEERING_ARRIVED' &&
          input.features.steeringInterrupts &&
          from.snapshot.matches({ TOOL_EXECUTION: 'running' })
        ) || effects.some((effect) => effect.action === 'holdStartingCalls'),
      );
      checks.that(
        'an approval request is resolved only once it was published',
        resolutionsIn(effects).every((id) => [...observed.requested, ...requestsIn(effects)].includes(id)),
      );
      if (label.startsWith('approval:requested:')) {
        const next = awaitingApproval(from.snapshot.context).find(
          ({ call }) => !from.snapshot.context.asked.includes(call.id),
        );
        checks.that(
          'the requests of the batch go out one after another, in call order',
          sameList(requestsIn(effects), next ? [next.call.id] : []),
          () => `asked [${requestsIn(effects).join(', ')}], next ${next?.call.id ?? '-'}`,
        );
      }
      if (to.snapshot.matches({ TOOL_EXECUTION: { askingApproval: 'waiting' } })) {
        const unasked = awaitingApproval(to.snapshot.context).filter(
          ({ call }) => !to.snapshot.context.asked.includes(call.id),
        );
        checks.that('every call awaiting approval is asked before any decision is waited for', unasked.length === 0);
      }
      const abortSent = observed.abortSent || label === 'ABORT';
      return observe(
        {
          ...observed,
          abortSent,
          steeringSeen,
          abortSeen: abortSent || observed.abortSeen || label === 'reply:aborted',
        },
        to,
        effects,
        checks,
      );
    },

    end: (observed, last, checks) => {
      checks.that(
        'every path ends in a final state',
        last.status === 'done',
        () => `stopped in ${JSON.stringify(last.snapshot.value)}`,
      );
      if (last.status !== 'done') return;
      const final = String(last.snapshot.value);
      const output = last.snapshot.output as TurnOutput;
      checks.that(
        'turnStart exactly once for a fresh turn that started',
        observed.turnStarts === (fresh && final !== 'stoppedBeforeStart' ? 1 : 0),
        () => `${observed.turnStarts} in ${final}`,
      );
      checks.that(
        'a fresh turn commits its input batch (never lost)',
        observed.inputCommits === (fresh ? 1 : 0),
        () => `${observed.inputCommits} commits`,
      );
      checks.that(
        'turnEnd ⇔ the turn closed (final state done)',
        (observed.turnEnds === 1) === (final === 'done'),
        () => `${observed.turnEnds} turnEnds in ${final}`,
      );
      if (final === 'deferredToMaster') {
        checks.that(
          'a deferred attempt publishes and commits nothing',
          observed.publishes === 0 && observed.commits === 0,
        );
        checks.that(
          'deferred only when the master promised that recovery',
          output.detail === 'overflow'
            ? input.overflowRecoveryAvailable
            : output.detail === 'retryable' && (input.retryAvailable || input.fallbackAvailable),
          () => `detail ${output.detail ?? '-'} with input ${JSON.stringify(input)}`,
        );
      }
      if (observed.enteredToolExecution) {
        checks.that(
          'an entered TOOL_EXECUTION ends through RESPONSE (committed)',
          observed.commits === 1,
          () => `${observed.commits} commits, ended in ${final}`,
        );
      }
      if (observed.commits === 1) {
        const unresolved = observed.requested.filter((id) => !observed.resolved.includes(id));
        checks.that(
          'every published approval request is resolved by the time the turn commits',
          unresolved.length === 0,
          () => `unresolved [${unresolved.join(', ')}]`,
        );
      }
      if (final === 'done' && output.assistant) {
        const calls = toolCallsOf(output.assistant).map((block) => block.id);
        const results = output.toolResults.map((result) => result.toolCallId);
        checks.that(
          'turnEnd carries one result per tool call',
          sameList(calls, results),
          () => `calls [${calls.join(', ')}], results [${results.join(', ')}]`,
        );
      }
      checks.that(
        'ABORT ⇒ the turn ends aborted',
        !observed.abortSent || output.kind === 'aborted',
        () => `kind ${output.kind} (${output.turnEndReason ?? '-'})`,
      );
      checks.that(
        'aborted only after ABORT or an aborted reply',
        observed.abortSeen || closing || output.kind !== 'aborted',
      );
      checks.that(
        'a turn resumed with its reply published never publishes it again',
        input.resume?.reply == null || observed.publishes === 0,
      );
      checks.that(
        'a closing attempt publishes one aborted message and closes the turn',
        !closing || (output.kind === 'aborted' && observed.publishes === 1 && final === 'done'),
      );
      checks.that(
        'a steering interrupt only after steering',
        output.turnEndReason !== 'steeringInterrupt' || observed.steeringSeen,
      );
      checks.that(
        'the end reason matches the outcome',
        output.kind !== 'success' ||
          ['complete', 'toolsExecuted', 'steeringInterrupt'].includes(output.turnEndReason ?? ''),
        () => `success with ${output.turnEndReason ?? 'no reason'}`,
      );
    },
  };
}

/** What `ABORT` must lead to: the turn closed as aborted. */
export function endsAborted(walk: TurnWalk): string | null {
  const output = walk.snapshot.output as TurnOutput | undefined;
  if (walk.snapshot.value !== 'done' || output?.kind !== 'aborted')
    return `ended in ${JSON.stringify(walk.snapshot.value)} as ${output?.kind ?? '-'}`;
  return null;
}
