import fc from 'fast-check';
import type { ErrorKind } from 'agentchart/model-kit';

/**
 * A scenario is data: the agent's options, what each model call replies, how each approval is
 * decided, and the external actions (abort, steer, follow-up, clock) with how many scheduler steps
 * each waits before firing. fast-check generates and shrinks it; the scheduler picks the order.
 */

export interface ToolArgs {
  outcome: 'ok' | 'fail' | 'throw';
  /** Progress updates the tool sends before it finishes, each after a scheduler step. */
  updates: number;
  /** Whether the tool stops waiting when its signal aborts (a tool that ignores it keeps running). */
  honorsSignal: boolean;
}

export type CallSpec =
  | { kind: 'run'; tool: 'work' | 'guarded'; args: ToolArgs }
  | { kind: 'unknown' }
  | { kind: 'invalid' }
  | { kind: 'malformed' };

export type ReplyEnd =
  | { kind: 'done' }
  /** Stop reason length: the last tool call's arguments are cut off. */
  | { kind: 'length' }
  | { kind: 'error'; error: ErrorKind; retryAfterMs?: number }
  /** The stream holds open after its content until the run is aborted. */
  | { kind: 'stall' };

export interface ReplySpec {
  text: boolean;
  calls: CallSpec[];
  end: ReplyEnd;
}

export type ApprovalSpec =
  | { kind: 'approve' | 'deny' | 'reject' | 'invalid'; honorsSignal: boolean }
  | { kind: 'approveWith'; args: ToolArgs; honorsSignal: boolean }
  /** The handler throws synchronously. */
  | { kind: 'throwSync'; honorsSignal: boolean };

export type Action = { kind: 'abort' } | { kind: 'steer' } | { kind: 'followUp' } | { kind: 'tick'; ms: number };

/** Event types an action may fire on, synchronously, from inside an agent event subscriber. */
export const TRIGGER_EVENTS = [
  'turnStart',
  'beforeModelCall',
  'messageEnd',
  'toolApprovalRequested',
  'toolApprovalResolved',
  'toolExecutionStart',
  'toolExecutionUpdate',
  'toolExecutionEnd',
  'turnEnd',
  'retry',
  'modelFallback',
  'contextCompacted',
  'agentEnd',
] as const;
export type TriggerEvent = (typeof TRIGGER_EVENTS)[number];

export type Trigger =
  /** Fires after this many scheduler steps of its own (spreads actions over the run). */
  | { kind: 'steps'; after: number }
  /** Fires inside the subscriber of the nth (0-based) event of this type: a re-entrant call. */
  | { kind: 'event'; type: TriggerEvent; nth: number };

export interface TimedAction {
  action: Action;
  trigger: Trigger;
}

export type VerdictSpec = 'continue' | 'stop' | 'inject' | 'throw' | 'skip' | 'rewrite' | 'replace';

/** A gated policy in each present slot; invocation k returns verdicts[k] (then continue). */
export interface PolicySpecs {
  preTurn?: VerdictSpec[];
  preDispatch?: VerdictSpec[];
  postTurn?: VerdictSpec[];
  postLoop?: VerdictSpec[];
}

export interface AgentConfig {
  toolExecution: 'parallel' | 'sequential' | 'concurrency2';
  approvalMode: 'smart' | 'always' | 'bypass';
  steeringMode: 'oneAtATime' | 'all';
  followUpMode: 'oneAtATime' | 'all';
  steeringInterrupts: boolean;
  steeringGraceMs: number;
  maxAttempts: number;
  baseDelayMs: number;
  fallback: boolean;
  maxTurns?: number;
  /** `streaming: 'live'`: deltas published as they arrive (an attempt that showed text is never redone). */
  liveStreaming?: boolean;
  /** `timeouts.modelIdleMs` on the scenario's clock (absent: the timer never fires within the scenario). */
  modelIdleMs?: number;
  /** `timeouts.toolMs`: a tool still running after this long is aborted with `timed out after N ms`. */
  toolTimeoutMs?: number;
}

export interface Scenario {
  config: AgentConfig;
  replies: ReplySpec[];
  approvals: ApprovalSpec[];
  policies: PolicySpecs;
  actions: TimedAction[];
  /** After the first run ends, start a second one (continue(), or a new prompt) with the actions still racing. */
  secondRun: boolean;
}

export type PolicySlot = keyof PolicySpecs;
export type ActionKind = Action['kind'];

/** Which part of the space a property explores. FULL_FOCUS is everything. */
export interface Focus {
  tools: boolean;
  approvals: boolean;
  /** Replies that end in a classified error (every kind). */
  errors: boolean;
  /** Replies whose stream ends in an error after complete tool calls. */
  callsBeforeError: boolean;
  stalls: boolean;
  secondRun: boolean;
  /** Generate a maxTurns limit (1–4) for some scenarios. */
  maxTurns: boolean;
  /** Whether a scenario with a maxTurns limit may also send follow-ups. */
  followUpsWithMaxTurns: boolean;
  /** Generate model idle and tool timeouts on the clock for some scenarios. */
  timeouts: boolean;
  /** The verdicts each policy slot may script; a slot that is absent gets no policy. */
  policies: Partial<Record<PolicySlot, readonly VerdictSpec[]>>;
  /** Relative weight of each external action (0: never). */
  actions: Record<ActionKind, number>;
  /** Event types whose subscriber may fire an action re-entrantly, per action kind. */
  reentrant: Record<ActionKind, readonly TriggerEvent[]>;
  maxReplies: number;
  maxActions: number;
}

const ALL_VERDICTS: Record<PolicySlot, readonly VerdictSpec[]> = {
  preTurn: ['continue', 'stop', 'inject', 'throw'],
  preDispatch: ['continue', 'stop', 'skip', 'rewrite', 'inject', 'throw'],
  postTurn: ['continue', 'stop', 'inject', 'replace', 'throw'],
  postLoop: ['continue', 'stop', 'inject', 'throw'],
};

export const FULL_FOCUS: Focus = {
  tools: true,
  approvals: true,
  errors: true,
  callsBeforeError: true,
  stalls: true,
  secondRun: true,
  maxTurns: true,
  followUpsWithMaxTurns: true,
  timeouts: true,
  policies: ALL_VERDICTS,
  actions: { abort: 2, steer: 3, followUp: 3, tick: 1 },
  reentrant: { abort: TRIGGER_EVENTS, steer: TRIGGER_EVENTS, followUp: TRIGGER_EVENTS, tick: TRIGGER_EVENTS },
  maxReplies: 5,
  maxActions: 5,
};

const ERROR_KINDS: ErrorKind[] = [
  'rateLimit',
  'overloaded',
  'network',
  'timeout',
  'contextOverflow',
  'auth',
  'badRequest',
  'unknown',
  'aborted',
];

const toolArgs: fc.Arbitrary<ToolArgs> = fc.record({
  outcome: fc.constantFrom('ok', 'fail', 'throw'),
  updates: fc.integer({ min: 0, max: 2 }),
  honorsSignal: fc.boolean(),
});

function callSpec(focus: Focus): fc.Arbitrary<CallSpec> {
  const tool = focus.approvals ? fc.constantFrom<'work' | 'guarded'>('work', 'guarded') : fc.constant<'work'>('work');
  return fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('run' as const), tool, args: toolArgs }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<CallSpec>({ kind: 'unknown' }, { kind: 'invalid' }, { kind: 'malformed' }),
    },
  );
}

function replyEnd(focus: Focus): fc.Arbitrary<ReplyEnd> {
  const ends: Array<fc.WeightedArbitrary<ReplyEnd>> = [
    { weight: 6, arbitrary: fc.constant({ kind: 'done' as const }) },
  ];
  if (focus.tools) ends.push({ weight: 1, arbitrary: fc.constant({ kind: 'length' as const }) });
  if (focus.errors) {
    const error = fc.record(
      {
        kind: fc.constant('error' as const),
        error: fc.constantFrom(...ERROR_KINDS),
        retryAfterMs: fc.constantFrom(50, 2_000),
      },
      { requiredKeys: ['kind', 'error'] },
    );
    ends.push({ weight: 3, arbitrary: error });
  }
  if (focus.stalls) ends.push({ weight: 1, arbitrary: fc.constant({ kind: 'stall' as const }) });
  return fc.oneof(...ends);
}

function replySpec(focus: Focus): fc.Arbitrary<ReplySpec> {
  const reply: fc.Arbitrary<ReplySpec> = fc.record({
    text: fc.boolean(),
    // 0, 1, 2 or 3 tool calls.
    calls: focus.tools ? fc.array(callSpec(focus), { maxLength: 3 }) : fc.constant<CallSpec[]>([]),
    end: replyEnd(focus),
  });
  return focus.callsBeforeError
    ? reply
    : reply.map((r): ReplySpec => (r.end.kind === 'error' ? { ...r, calls: [] } : r));
}

const approvalSpec: fc.Arbitrary<ApprovalSpec> = fc.oneof(
  fc.record({
    kind: fc.constantFrom(
      'approve' as const,
      'deny' as const,
      'reject' as const,
      'invalid' as const,
      'throwSync' as const,
    ),
    honorsSignal: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('approveWith' as const), args: toolArgs, honorsSignal: fc.boolean() }),
);

function action(focus: Focus): fc.Arbitrary<Action> {
  const all: Record<ActionKind, fc.Arbitrary<Action>> = {
    abort: fc.constant({ kind: 'abort' as const }),
    steer: fc.constant({ kind: 'steer' as const }),
    followUp: fc.constant({ kind: 'followUp' as const }),
    tick: fc.record({ kind: fc.constant('tick' as const), ms: fc.constantFrom(50, 100, 250, 1_000) }),
  };
  const weighted = (Object.keys(all) as ActionKind[]).filter((kind) => focus.actions[kind] > 0);
  return fc.oneof(...weighted.map((kind) => ({ weight: focus.actions[kind], arbitrary: all[kind] })));
}

function policySpecs(focus: Focus): fc.Arbitrary<PolicySpecs> {
  const slots = Object.entries(focus.policies) as Array<[PolicySlot, readonly VerdictSpec[]]>;
  if (slots.length === 0) return fc.constant({});
  // Continue is the common verdict; the others are drawn less often.
  const verdicts = (allowed: readonly VerdictSpec[]) =>
    fc.array(
      fc.oneof(
        ...allowed.map((verdict) => ({ weight: verdict === 'continue' ? 4 : 1, arbitrary: fc.constant(verdict) })),
      ),
      { maxLength: 3 },
    );
  const specs = fc.record(
    Object.fromEntries(slots.map(([slot, allowed]) => [slot, verdicts(allowed)])) as Record<
      PolicySlot,
      fc.Arbitrary<VerdictSpec[]>
    >,
    { requiredKeys: [] },
  );
  return fc.oneof(fc.constant({}), specs);
}

/** An action fires after scheduler steps, or re-entrantly from a subscriber when the focus allows that event type. */
function timedAction(focus: Focus): fc.Arbitrary<TimedAction> {
  const steps = fc.record({ kind: fc.constant('steps' as const), after: fc.integer({ min: 0, max: 8 }) });
  const onEvent = fc.record({
    kind: fc.constant('event' as const),
    type: fc.constantFrom(...TRIGGER_EVENTS),
    nth: fc.integer({ min: 0, max: 2 }),
  });
  const anyReentrant = Object.values(focus.reentrant).some((types) => types.length > 0);
  const trigger: fc.Arbitrary<Trigger> = anyReentrant
    ? fc.oneof({ weight: 3, arbitrary: steps }, { weight: 1, arbitrary: onEvent })
    : steps;
  return fc.record({ action: action(focus), trigger }).map(({ action, trigger }): TimedAction => {
    if (trigger.kind === 'event' && !focus.reentrant[action.kind].includes(trigger.type))
      return { action, trigger: { kind: 'steps', after: trigger.nth } };
    return { action, trigger };
  });
}

function config(focus: Focus): fc.Arbitrary<AgentConfig> {
  return fc.record(
    {
      toolExecution: fc.constantFrom('parallel', 'sequential', 'concurrency2'),
      // Without approvals in focus only 'work' is called, which 'smart' and 'bypass' never ask about.
      approvalMode: focus.approvals ? fc.constantFrom('smart', 'always', 'bypass') : fc.constantFrom('smart', 'bypass'),
      steeringMode: fc.constantFrom('oneAtATime', 'all'),
      followUpMode: fc.constantFrom('oneAtATime', 'all'),
      steeringInterrupts: fc.boolean(),
      steeringGraceMs: fc.constantFrom(0, 100, 250),
      maxAttempts: fc.integer({ min: 1, max: 3 }),
      baseDelayMs: fc.constantFrom(0, 100, 1_000),
      fallback: fc.boolean(),
      maxTurns: focus.maxTurns ? fc.integer({ min: 1, max: 4 }) : fc.constant(undefined),
      liveStreaming: fc.boolean(),
      modelIdleMs: focus.timeouts ? fc.constantFrom(500, 30_000) : fc.constant(undefined),
      toolTimeoutMs: focus.timeouts ? fc.constantFrom(200, 5_000) : fc.constant(undefined),
    },
    {
      requiredKeys: [
        'toolExecution',
        'approvalMode',
        'steeringMode',
        'followUpMode',
        'steeringInterrupts',
        'steeringGraceMs',
        'maxAttempts',
        'baseDelayMs',
        'fallback',
      ],
    },
  );
}

export function scenarioArbitrary(overrides: Partial<Focus> = {}): fc.Arbitrary<Scenario> {
  const focus = { ...FULL_FOCUS, ...overrides };
  const scenario: fc.Arbitrary<Scenario> = fc.record({
    config: config(focus),
    replies: fc.array(replySpec(focus), { maxLength: focus.maxReplies }),
    approvals: focus.approvals ? fc.array(approvalSpec, { maxLength: 4 }) : fc.constant<ApprovalSpec[]>([]),
    policies: policySpecs(focus),
    actions: fc.array(timedAction(focus), { maxLength: focus.maxActions }),
    secondRun: focus.secondRun ? fc.boolean() : fc.constant(false),
  });
  if (focus.followUpsWithMaxTurns) return scenario;
  // A maxTurns limit turns follow-ups into steering messages.
  return scenario.map((s): Scenario => {
    if (s.config.maxTurns === undefined) return s;
    return {
      ...s,
      actions: s.actions.map((a) => (a.action.kind === 'followUp' ? { ...a, action: { kind: 'steer' } } : a)),
    };
  });
}

/** A hand-written scenario (pending reproductions, tests of the checks): everything not given is off. */
export function scenarioOf(partial: { config?: Partial<AgentConfig> } & Partial<Omit<Scenario, 'config'>>): Scenario {
  return {
    config: {
      toolExecution: 'parallel',
      approvalMode: 'smart',
      steeringMode: 'oneAtATime',
      followUpMode: 'oneAtATime',
      steeringInterrupts: true,
      steeringGraceMs: 250,
      maxAttempts: 1,
      baseDelayMs: 0,
      fallback: false,
      ...partial.config,
    },
    replies: partial.replies ?? [],
    approvals: partial.approvals ?? [],
    policies: partial.policies ?? {},
    actions: partial.actions ?? [],
    secondRun: partial.secondRun ?? false,
  };
}

export const afterSteps = (action: Action, after = 0): TimedAction => ({ action, trigger: { kind: 'steps', after } });
export const onEvent = (type: TriggerEvent, action: Action, nth = 0): TimedAction => ({
  action,
  trigger: { kind: 'event', type, nth },
});
export const OK: ToolArgs = { outcome: 'ok', updates: 0, honorsSignal: false };
export const run = (tool: 'work' | 'guarded', args: ToolArgs = OK): CallSpec => ({ kind: 'run', tool, args });
