import type { z } from 'zod';
import { contextViewOf } from '../../domain/history-view.js';
import { AgentEventSchema, type Message, MessageSchema } from '../../domain/index.js';

/** runId, seq and turnIndex problems are reported by the seq checks, with their own wording. */
const REPORTED_ELSEWHERE = new Set<PropertyKey>(['runId', 'seq', 'turnIndex']);
const MAX_ISSUES = 3;

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues
    .slice(0, MAX_ISSUES)
    .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
  const more = issues.length > MAX_ISSUES ? ` (+${issues.length - MAX_ISSUES} more)` : '';
  return shown.join('; ') + more;
}

/** Messages already checked in one checkInvariants call: by object, and history arrays by checked prefix. */
export interface SeenMessages {
  objects: WeakSet<object>;
  prefixes: WeakMap<readonly Message[], number>;
}

export const seenMessages = (): SeenMessages => ({ objects: new WeakSet(), prefixes: new WeakMap() });

/**
 * Validates one logged event against the contract schema. The messages of a `messages` field
 * (each beforeModelCall carries the whole context) are checked once across the log: a view over
 * the history (the runtime's events, a store's loaded events) by the part of the history not
 * checked yet, other arrays message by message (once per object). Thousands of model calls are
 * checked in linear time.
 */
export function checkEventShape(
  event: unknown,
  where: string,
  out: string[],
  seen: SeenMessages = seenMessages(),
): void {
  if (typeof event !== 'object' || event === null) return;
  const view = contextViewOf(event);
  const hasMessages = 'messages' in event && (view !== undefined || Array.isArray(event.messages));
  const fieldOf = (key: string) => (key === 'messages' ? [] : (event as Record<string, unknown>)[key]);
  const shell = hasMessages ? Object.fromEntries(Object.keys(event).map((key) => [key, fieldOf(key)])) : event;
  const parsed = AgentEventSchema.safeParse(shell);
  const issues: z.core.$ZodIssue[] = parsed.success ? [] : [...parsed.error.issues];
  const check = (message: unknown, index: number) => {
    if (typeof message === 'object' && message !== null && seen.objects.has(message)) return;
    const result = MessageSchema.safeParse(message);
    if (result.success) seen.objects.add(message as object);
    else issues.push(...result.error.issues.map((issue) => ({ ...issue, path: ['messages', index, ...issue.path] })));
  };
  if (view) {
    const from = seen.prefixes.get(view.items) ?? 0;
    for (let i = from; i < view.prefix; i++) check(view.items[i], i);
    if (view.prefix > from) seen.prefixes.set(view.items, view.prefix);
    view.tail.forEach((message, i) => check(message, view.prefix + i));
  } else if (hasMessages) {
    (event as { messages: unknown[] }).messages.forEach(check);
  }
  const reportedElsewhere = (issue: z.core.$ZodIssue) =>
    issue.path.length === 1 && REPORTED_ELSEWHERE.has(issue.path[0] as PropertyKey);
  const shown = issues.filter((issue) => !reportedElsewhere(issue));
  if (shown.length === 0) return;
  const type = 'type' in event ? String(event.type) : 'event';
  out.push(`schema: ${type} at ${where} is malformed: ${describeIssues(shown)}`);
}

export function checkMessagesShape(messages: readonly Message[], label: string, out: string[]): void {
  messages.forEach((message, i) => {
    const parsed = MessageSchema.safeParse(message);
    if (!parsed.success) out.push(`schema: ${label} message ${i} is malformed: ${describeIssues(parsed.error.issues)}`);
  });
}
