import { AgentError } from '../../domain/errors.js';
import type { MessageInput } from '../../domain/messages.js';
import type { ApprovalDecision } from '../../policies/types.js';
import type { DurableOptions } from '../../runtime/agent.js';
import type { AgentOptions } from '../../runtime/options.js';
import type { ScriptEntry } from '../scripted-model.js';
import { NEVER_MS, type TrackedClock } from '../tracked-clock.js';
import {
  INTERRUPTIONS,
  type AgentUnderTest,
  type ExploreOptions,
  type Interruption,
  type Property,
  type Replies,
} from './types.js';
import type { World } from './world.js';

/** The exploration's settings, checked and resolved once. */
export interface Spec {
  agent: AgentUnderTest;
  replies: ReadonlyMap<string, ScriptEntry>;
  interruptions: ReadonlySet<Interruption>;
  /** Answers the explorer gives approvals; empty when the agent's own handler answers. */
  approvals: ReadonlyMap<string, ApprovalDecision>;
  maxTurns: number;
  maxInterruptions: number;
  maxPaths: number;
  maxViolations: number;
  property: Property | null;
  prompt: MessageInput | MessageInput[];
  toolOrder: 'callOrder' | 'any';
  bodies: 'stub' | 'real';
  reentrant: boolean;
  replay: string[] | null;
}

export const DEFAULTS = { maxTurns: 3, maxInterruptions: 1, maxPaths: 20_000, maxViolations: 10 } as const;

export function compileSpec(agent: AgentUnderTest, options: ExploreOptions): Spec {
  if (typeof options !== 'object' || options === null) throw invalid('the second argument must be an options object');
  const interruptions = new Set(options.interruptions ?? []);
  for (const item of interruptions) {
    if (!INTERRUPTIONS.includes(item))
      throw invalid(`unknown interruption ${JSON.stringify(item)}; expected one of ${INTERRUPTIONS.join(', ')}`);
  }
  const approvals = new Map<string, ApprovalDecision>();
  if (interruptions.has('approve')) approvals.set('approve', { approved: true });
  if (interruptions.has('deny')) approvals.set('deny', { approved: false, reason: 'denied' });
  for (const [name, decision] of Object.entries(options.approvals ?? {})) {
    if (!/^\S+$/.test(name) || approvals.has(name))
      throw invalid(`approval answer name ${JSON.stringify(name)} must be one word, unique`);
    approvals.set(name, decision);
  }
  const count = (value: number | undefined, fallback: number, name: string, min: number) => {
    const n = value ?? fallback;
    if (!Number.isInteger(n) || n < min) throw invalid(`${name} must be an integer ≥ ${min}`);
    return n;
  };
  return {
    agent,
    replies: alphabet(options.replies),
    interruptions,
    approvals,
    maxTurns: count(options.maxTurns, DEFAULTS.maxTurns, 'maxTurns', 1),
    maxInterruptions: count(options.maxInterruptions, DEFAULTS.maxInterruptions, 'maxInterruptions', 0),
    maxPaths: count(options.maxPaths, DEFAULTS.maxPaths, 'maxPaths', 1),
    maxViolations: count(options.maxViolations, DEFAULTS.maxViolations, 'maxViolations', 1),
    property: options.property ?? null,
    prompt: options.prompt ?? 'Go.',
    toolOrder: options.toolOrder ?? 'callOrder',
    bodies: options.toolBodies ?? 'stub',
    reentrant: options.reentrant ?? false,
    replay: options.path === undefined ? null : parseReplay(options.path),
  };
}

/** The separator of a replay string: step labels never contain it. */
export const REPLAY_SEPARATOR = ' → ';

export function parseReplay(path: string): string[] {
  return path.trim() === '' ? [] : path.split(REPLAY_SEPARATOR).map((label) => label.trim());
}

/** Named replies; an array's entries are named by what they do (`call deploy`, `text`, `error rateLimit`). */
function alphabet(replies: Replies): ReadonlyMap<string, ScriptEntry> {
  if (typeof replies !== 'object' || replies === null)
    throw invalid('replies must be an array or a record of script entries');
  const entries: Array<[string, ScriptEntry]> = Array.isArray(replies)
    ? (replies as readonly ScriptEntry[]).map((entry) => [nameOf(entry), entry])
    : Object.entries(replies as Record<string, ScriptEntry>);
  if (entries.length === 0) throw invalid('replies must hold at least one reply');
  const named = new Map<string, ScriptEntry>();
  for (const [name, entry] of entries) {
    if (name.includes(REPLAY_SEPARATOR.trim()))
      throw invalid(`reply name ${JSON.stringify(name)} must not contain "→"`);
    let unique = name;
    for (let n = 2; named.has(unique); n++) unique = `${name} #${n}`;
    named.set(unique, entry);
  }
  return named;
}

function nameOf(entry: ScriptEntry): string {
  if (entry.error) return `error ${entry.error.kind}`;
  if (entry.toolCalls?.length) return `call ${entry.toolCalls.map((call) => call.name).join('+')}`;
  return entry.text !== undefined ? 'text' : 'empty';
}

function invalid(message: string): AgentError {
  return new AgentError('InvalidOptions', `exploreAgent: ${message}.`);
}

/**
 * The agent's options as explored: its models, tool bodies and (when the explorer answers them)
 * approval handler replaced by the world; the world's clock; no jitter; the turn bound; no model
 * idle timer unless the agent set one; no inspector or OpenTelemetry of its own.
 */
export function exploredOptions(
  spec: Spec,
  base: AgentOptions,
  world: World,
  clock: TrackedClock,
  approvalHandler: boolean,
): AgentOptions {
  if (typeof base !== 'object' || base === null)
    throw invalid('the agent options must be an object (or a function returning one)');
  // The agent's own store, inspector and OpenTelemetry stay out: every path gets a fresh world.
  const {
    inspect: _inspect,
    otel: _otel,
    store: _store,
    sessionId: _sessionId,
    ...rest
  } = base as AgentOptions & DurableOptions;
  const fallbackModels = (base.fallbackModels ?? []).map((model) => world.model(model.name, model.provider));
  const options: AgentOptions = {
    ...rest,
    model: world.model(base.model?.name ?? 'model', base.model?.provider),
    ...(fallbackModels.length > 0 ? { fallbackModels } : {}),
    tools: (base.tools ?? []).map((tool) => world.tool(tool)),
    ...(base.policies ? { policies: world.policies(base.policies) } : {}),
    clock,
    retry: { ...base.retry, jitter: false },
    timeouts: { ...base.timeouts, modelIdleMs: base.timeouts?.modelIdleMs ?? NEVER_MS },
    maxTurns: Math.min(base.maxTurns ?? Number.POSITIVE_INFINITY, spec.maxTurns),
  };
  if (approvalHandler) options.approval = world.approvalHandler();
  else if (spec.approvals.size > 0) delete options.approval;
  return options;
}
