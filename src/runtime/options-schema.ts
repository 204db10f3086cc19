import { z } from 'zod';

/**
 * The one schema `createAgent` parses its options with. Each option is a named entry of
 * `OPTION_SHAPE`, so an option added later is one more line here (and in `AgentOptions`).
 * Unknown keys pass through (options a module adds before its entry lands here), unless they
 * look like a misspelling of a known option (`misspelledOptions`).
 */

/** The largest delay a timer can hold: beyond 2³¹−1 ms, setTimeout fires after 1 ms. */
export const MAX_DELAY_MS = 2 ** 31 - 1;

const isFunction = (value: unknown): boolean => typeof value === 'function';
const fn = (what: string) =>
  z.custom<(...args: never[]) => unknown>(isFunction, { error: `expected ${what} (a function)` });

/** z.number() already refuses NaN and ±Infinity. */
const delay = z
  .number({ error: 'expected a number of milliseconds' })
  .min(0, { error: 'expected a delay ≥ 0 ms' })
  .max(MAX_DELAY_MS, { error: `expected a delay ≤ ${MAX_DELAY_MS} ms (2³¹−1; a longer timer fires at once)` });
const timeout = delay.min(1, { error: 'expected a timeout ≥ 1 ms' });

const isModel = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as { name?: unknown }).name === 'string' &&
  isFunction((value as { stream?: unknown }).stream);
const model = z.custom<object>(isModel, {
  error: 'expected a Model (an object with a string `name` and a `stream()` function)',
});

const policySlot = z.array(fn('a policy'), { error: 'expected an array of policy functions' });
const queueMode = z.enum(['oneAtATime', 'all']);

const OPTION_SHAPE = {
  model,
  fallbackModels: z.array(model, { error: 'expected an array of Models' }).optional(),
  systemPrompt: z.string().optional(),
  // Each tool is checked by the tool registry, which names the tool and the field at fault.
  tools: z.array(z.unknown(), { error: 'expected an array of tools (from defineTool)' }).optional(),
  policies: z
    .strictObject({
      preTurn: policySlot.optional(),
      preDispatch: policySlot.optional(),
      postTurn: policySlot.optional(),
      postLoop: policySlot.optional(),
    })
    .optional(),
  approval: fn('an approval handler').optional(),
  approvalMode: z.enum(['always', 'smart', 'bypass']).optional(),
  toolExecution: z
    .union(
      [
        z.enum(['parallel', 'sequential']),
        z.strictObject({ concurrency: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER) }),
        z.strictObject({ partition: fn('a partition') }),
      ],
      { error: `expected 'parallel', 'sequential', { concurrency: n ≥ 1 } or { partition(calls) }` },
    )
    .optional(),
  steeringMode: queueMode.optional(),
  followUpMode: queueMode.optional(),
  streaming: z.enum(['buffered', 'live']).optional(),
  steeringInterrupts: z.boolean().optional(),
  steeringGraceMs: delay.optional(),
  retry: z
    .strictObject({
      maxAttempts: z.number().int().min(1).max(1_000),
      baseDelayMs: delay,
      maxDelayMs: delay,
      jitter: z.boolean(),
      maxRetryAfterMs: delay,
    })
    .partial()
    .optional(),
  timeouts: z.strictObject({ modelIdleMs: timeout, toolMs: timeout }).partial().optional(),
  maxTurns: z
    .union([z.number().int().min(1), z.literal(Number.POSITIVE_INFINITY)], {
      error: 'expected an integer ≥ 1 (or Infinity)',
    })
    .optional(),
  finalReport: z.strictObject({ toolName: z.string().min(1) }).optional(),
  context: z
    .strictObject({ maxTokens: z.number().positive().optional(), transform: fn('a context transform').optional() })
    .optional(),
  clock: z
    .custom<object>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        isFunction((value as { setTimeout?: unknown }).setTimeout) &&
        isFunction((value as { clearTimeout?: unknown }).clearTimeout),
      { error: 'expected an XState clock ({ setTimeout, clearTimeout }, e.g. a SimulatedClock)' },
    )
    .optional(),
  inspect: z
    .custom<object>((value) => isFunction(value) || (typeof value === 'object' && value !== null), {
      error: 'expected an inspection observer (a function or an observer object)',
    })
    .optional(),
  onSubscriberError: fn('an error handler').optional(),
  otel: z
    .custom<object>(
      (value) => typeof value === 'object' && value !== null && isFunction((value as { attach?: unknown }).attach),
      {
        error: 'expected an agent observer (otelObserver() from agentchart/otel: an object with attach())',
      },
    )
    .optional(),
  store: z
    .custom<object>(
      (value) => typeof value === 'object' && value !== null && isFunction((value as { load?: unknown }).load),
      {
        error: 'expected a SessionStore (memoryStore(), sqliteStore(path), …)',
      },
    )
    .optional(),
  sessionId: z.string().min(1).optional(),
  /** The session's lease, taken per run: its time to live (renewed while the run goes on), its owner, its host identity. */
  lease: z
    .strictObject({
      ttlMs: timeout.int({ error: 'expected a whole number of milliseconds' }),
      owner: z.string().min(1),
      host: z.string().min(1),
    })
    .partial()
    .optional(),
  /** Events of a run replayed to a late subscriber (a bounded buffer: memory does not grow with a long run). */
  replayBuffer: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
};

export const AgentOptionsSchema = z.looseObject(OPTION_SHAPE);
export type ParsedAgentOptions = z.output<typeof AgentOptionsSchema>;

/** `InvalidOptions` text for the first issue: the option's path, what was expected, what was given. */
export function describeOptionIssue(options: object, issues: readonly z.core.$ZodIssue[]): string {
  const issue = issues[0];
  if (!issue) return 'createAgent: invalid options.';
  const path = formatPath(issue.path);
  const unknown =
    issue.code === 'unrecognized_keys' ? issue.keys.map((key) => `${path === '' ? '' : `${path}.`}${key}`) : null;
  if (unknown) return `createAgent: unknown option ${unknown.map((key) => `\`${key}\``).join(', ')}.`;
  const given = describeValue(valueAt(options, issue.path));
  return `createAgent: invalid option \`${path === '' ? '(options)' : path}\`: ${issue.message}; got ${given}.`;
}

/** A top-level key that is not an option but is one or two edits away from one (`toolExecutoin`). */
export function misspelledOptions(options: object): string | null {
  const known = Object.keys(OPTION_SHAPE);
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = known.find(
      (option) =>
        option.toLowerCase() === key.toLowerCase() || editDistance(option, key) <= (option.length >= 6 ? 2 : 1),
    );
    if (near) return `createAgent: unknown option \`${key}\` (did you mean \`${near}\`?).`;
  }
  return null;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`))
    .join('');
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  return String(value);
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] as number;
      row[j] = Math.min(above + 1, (row[j - 1] as number) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] as number;
}
