import { z } from 'zod';
import { AgentError } from '../domain/errors.js';
import { jsonProblem } from '../domain/json-problem.js';
import { MessageSchema, type Message } from '../domain/messages.js';
import type { ToolSpec } from '../model/port.js';
import { compactMessages } from './compact.js';
import { TokenLedger } from './estimate.js';
import { checkToolParity } from './parity.js';

/**
 * Default compaction target, as a share of the budget: compacting well below the limit leaves room
 * for the reply and the next turns, so the guard does not compact again on every call.
 */
export const COMPACTION_TARGET_RATIO = 0.7;

/** User context transform (`createAgent({ context: { transform } })`); may be sync or async. */
export type ContextTransform = (messages: Message[], info: { overflow: boolean }) => Message[] | Promise<Message[]>;

export const ContextGuardOptionsSchema = z.object({
  /** Context budget in estimated tokens (messages + system prompt + tool specs). */
  maxTokens: z.number().positive(),
  transform: z
    .custom<ContextTransform>((value) => typeof value === 'function', 'transform must be a function')
    .optional(),
  /** Passed to the default compaction: recent messages always kept (default 1). */
  keepRecent: z.number().int().positive().optional(),
});
export type ContextGuardOptions = z.input<typeof ContextGuardOptionsSchema>;

export interface PrepareOptions {
  /** The provider just reported a context overflow for this request. */
  overflow: boolean;
  systemPrompt?: string;
  tools?: readonly ToolSpec[];
}

/** Size of a request; `tokens` is the estimate of messages + system prompt + tool specs. */
export interface ContextSize {
  messages: number;
  tokens: number;
}
/** Shaped for the `contextCompacted` event. */
export interface ContextCompaction {
  before: ContextSize;
  after: ContextSize;
}
/** Why a transform's output was replaced by the default compaction. */
export interface TransformRejection {
  reason: string;
  violations: string[];
}

export type ContextPrepareResult =
  | {
      ok: true;
      /** The input array itself when nothing changed. */
      messages: Message[];
      compacted: ContextCompaction | null;
      transformRejected: TransformRejection | null;
    }
  | { ok: false; error: { code: 'contextTransformFailed'; message: string } };

export interface ContextGuard {
  readonly maxTokens: number;
  /** Prepares the messages of one model request; never throws or rejects. */
  prepare(messages: Message[], options: PrepareOptions): Promise<ContextPrepareResult>;
  /** The guard's cached estimate of a request. */
  estimate(messages: readonly Message[], systemPrompt?: string, tools?: readonly ToolSpec[]): number;
}

/**
 * The context guard the runtime calls before every model call.
 *
 * Without a transform: when `overflow` is set or the estimate exceeds `maxTokens`, the messages are
 * compacted (`compactMessages`) so the whole request fits 70% of the budget — of the smaller of
 * `maxTokens` and the current estimate on overflow, since the provider just proved the estimate too
 * low. Otherwise the same array is returned untouched (cached estimate, no copy).
 *
 * With a transform: it is called on every prepare (with a copy of the array) and replaces the
 * default entirely. A throw or rejection gives `{ ok: false }`. An output that is not an array of
 * valid messages, is empty, or breaks tool-call/result parity is replaced by the default compaction
 * and reported in `transformRejected`.
 *
 * Bad options throw `AgentError('InvalidOptions')` at creation.
 */
export function createContextGuard(options: ContextGuardOptions): ContextGuard {
  const parsed = ContextGuardOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new AgentError('InvalidOptions', `context: ${z.prettifyError(parsed.error)}`);
  }
  const { maxTokens, transform, keepRecent } = parsed.data;
  const ledger = new TokenLedger();
  // Messages that passed schema validation once; the runtime's own history is never re-parsed.
  const validated = new WeakSet<object>();

  const sizeOf = (messages: readonly Message[], prepare: PrepareOptions): ContextSize => ({
    messages: messages.length,
    tokens: ledger.context(messages, prepare.systemPrompt, prepare.tools),
  });

  const compactionOf = (input: Message[], output: Message[], prepare: PrepareOptions) =>
    sameMessages(input, output) ? null : { before: sizeOf(input, prepare), after: sizeOf(output, prepare) };

  const defaultPrepare = (messages: Message[], prepare: PrepareOptions): Message[] => {
    const overhead = ledger.overhead(prepare.systemPrompt, prepare.tools);
    const total = overhead + ledger.messages(messages);
    if (!prepare.overflow && total <= maxTokens) return messages;
    const base = prepare.overflow ? Math.min(maxTokens, total) : maxTokens;
    const budget = Math.max(0, Math.floor(base * COMPACTION_TARGET_RATIO) - overhead);
    return compactMessages(messages, { maxTokens: budget, keepRecent, ledger });
  };

  const rejectionOf = (input: Message[], output: unknown): TransformRejection | null => {
    if (!Array.isArray(output)) {
      return {
        reason: 'transform did not return an array of messages',
        violations: [`got ${output === null ? 'null' : typeof output}`],
      };
    }
    if (output.length === 0 && input.length > 0) {
      return { reason: 'transform returned no messages', violations: [] };
    }
    const known = new Set<unknown>(input);
    const invalid: string[] = [];
    output.forEach((message: unknown, index) => {
      if (known.has(message) || (typeof message === 'object' && message !== null && validated.has(message))) return;
      const check = MessageSchema.safeParse(message);
      // What the model is sent is published in beforeModelCall and stored: JSON, all of it.
      const problem = check.success ? jsonProblem(message, `message ${index}`) : null;
      if (!check.success) invalid.push(`message ${index}: ${z.prettifyError(check.error)}`);
      else if (problem) invalid.push(`${problem}, which JSON cannot hold`);
      else validated.add(message as object);
    });
    if (invalid.length > 0) return { reason: 'transform returned invalid messages', violations: invalid };
    const parity = checkToolParity(output as Message[]);
    if (!parity.ok) return { reason: 'transform output breaks tool-call/result parity', violations: parity.violations };
    return null;
  };

  return {
    maxTokens,
    estimate: (messages, systemPrompt, tools) => ledger.context(messages, systemPrompt, tools),
    async prepare(messages, prepare) {
      if (!transform) {
        const output = defaultPrepare(messages, prepare);
        return {
          ok: true,
          messages: output,
          compacted: compactionOf(messages, output, prepare),
          transformRejected: null,
        };
      }
      let output: unknown;
      try {
        output = await transform(messages.slice(), { overflow: prepare.overflow });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        return {
          ok: false,
          error: { code: 'contextTransformFailed', message: `context transform failed: ${message}` },
        };
      }
      let rejection: TransformRejection | null;
      try {
        rejection = rejectionOf(messages, output);
      } catch (error) {
        // A getter or proxy in the output that throws while it is checked.
        const detail = error instanceof Error ? error.message : String(error);
        rejection = { reason: 'transform output could not be read', violations: [detail] };
      }
      const accepted = rejection ? defaultPrepare(messages, prepare) : (output as Message[]);
      const result = sameMessages(messages, accepted) ? messages : accepted;
      return {
        ok: true,
        messages: result,
        compacted: compactionOf(messages, result, prepare),
        transformRejected: rejection,
      };
    },
  };
}

function sameMessages(a: readonly Message[], b: readonly Message[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}
