import { z } from 'zod';
import { checkToolParity } from '../context/parity.js';
import { jsonProblem } from '../domain/json-problem.js';
import { AssistantMessageSchema, MessageInputSchema, toMessage } from '../domain/messages.js';
import type { ApprovalDecision, InjectVerdict, PostTurnVerdict, PreDispatchVerdict, Verdict } from './types.js';

/**
 * The shapes a policy verdict and an approval decision may have, as zod schemas. Every
 * value user code hands back is parsed with them (decisions are checked, never trusted): anything else
 * is a `policyError` counted as continue (verdicts), a denial (an approval handler's decision) or an
 * `AgentError('InvalidInput')` (`resolveApproval`). So is one that carries what JSON cannot hold (a BigInt
 * in approved arguments): the session publishes and stores it.
 */

const args = z.record(z.string(), z.unknown());

const continueVerdict = z.strictObject({ verdict: z.literal('continue') });
const stopVerdict = z.strictObject({ verdict: z.literal('stop'), reason: z.string() });
const injectVerdict = z.strictObject({ verdict: z.literal('inject'), messages: z.array(MessageInputSchema) });
const skipVerdict = z.strictObject({ verdict: z.literal('skip'), reason: z.string() });
const rewriteVerdict = z.strictObject({ verdict: z.literal('continue'), arguments: args });
const replaceVerdict = z.strictObject({ verdict: z.literal('replace'), assistant: AssistantMessageSchema });

export const VerdictSchema = z.union([continueVerdict, stopVerdict, injectVerdict]);
export const PreDispatchVerdictSchema = z.union([
  continueVerdict,
  rewriteVerdict,
  stopVerdict,
  injectVerdict,
  skipVerdict,
]);
export const PostTurnVerdictSchema = z.union([continueVerdict, stopVerdict, injectVerdict, replaceVerdict]);

export const ApprovalDecisionSchema = z.union([
  z.strictObject({ approved: z.literal(true), arguments: args.optional() }),
  z.strictObject({ approved: z.literal(false), reason: z.string().optional() }),
]);

/** What a user callback returned, checked: the parsed copy (read once), or why it was refused. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

function check<T>(schema: z.ZodType, value: unknown, what: string, name: string): Checked<T> {
  try {
    const parsed = schema.safeParse(value);
    if (!parsed.success) return { ok: false, problem: `${what} is not one of its allowed shapes: ${render(value)}` };
    // What it carries is published and stored (arguments, messages): refused here, not lost at the store.
    const problem = jsonProblem(parsed.data, name);
    if (problem) return { ok: false, problem: `${what} holds what JSON cannot: ${problem}` };
    return { ok: true, value: parsed.data as T };
  } catch (error) {
    // A getter or a proxy that throws while it is read.
    return {
      ok: false,
      problem: `${what} could not be read: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/**
 * Injected messages join a history whose tool pairs are all closed (they are added between turns or
 * after a turn's results): they must close their own pairs, or the history would break parity.
 */
function withClosedPairs<V extends { verdict: string }>(checked: Checked<V>): Checked<V> {
  if (!checked.ok || checked.value.verdict !== 'inject') return checked;
  const messages = (checked.value as unknown as InjectVerdict).messages.map(toMessage);
  const parity = checkToolParity(messages);
  if (parity.ok) return checked;
  const detail = parity.violations.slice(0, 3).join('; ');
  return { ok: false, problem: `the injected messages would break tool-call/result pairs in history (${detail})` };
}

export const checkVerdict = (value: unknown) =>
  withClosedPairs(check<Verdict>(VerdictSchema, value, 'the verdict', 'verdict'));
export const checkPreDispatchVerdict = (value: unknown) =>
  withClosedPairs(check<PreDispatchVerdict>(PreDispatchVerdictSchema, value, 'the verdict', 'verdict'));
export const checkPostTurnVerdict = (value: unknown) =>
  withClosedPairs(check<PostTurnVerdict>(PostTurnVerdictSchema, value, 'the verdict', 'verdict'));
export const checkApprovalDecision = (value: unknown) =>
  check<ApprovalDecision>(ApprovalDecisionSchema, value, 'the approval decision', 'decision');

function render(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}
